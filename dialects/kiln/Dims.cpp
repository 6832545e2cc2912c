// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Dims.cpp - tensor dimensions as expressions of symbols -------------===//

#include "dialects/kiln/Dims.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/AffineMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln {

LogicalResult DimsAttr::verify(function_ref<InFlightDiagnostic()> emitError, AffineMap map) {
  if (map.getNumDims() != 0)
    return emitError() << "#kiln.dims takes a map of symbols only, got " << AffineMapAttr::get(map);
  return success();
}

AffineMap dimsMap(MLIRContext *context, ArrayRef<AffineExpr> exprs) {
  unsigned symbols = 0;
  for (AffineExpr expr : exprs)
    expr.walk([&](AffineExpr inner) {
      if (auto symbol = dyn_cast<AffineSymbolExpr>(inner))
        symbols = std::max(symbols, symbol.getPosition() + 1);
    });
  SmallVector<AffineExpr> simplified;
  for (AffineExpr expr : exprs)
    simplified.push_back(simplifyAffineExpr(expr, 0, symbols));
  return AffineMap::get(0, symbols, simplified, context);
}

Dims constantDims(MLIRContext *context, ArrayRef<int64_t> shape) {
  Dims dims;
  for (int64_t size : shape)
    dims.push_back(getAffineConstantExpr(size, context));
  return dims;
}

Dims dimsOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  if (auto encoding = dyn_cast_or_null<DimsAttr>(tensor.getEncoding()))
    return Dims(encoding.getMap().getResults());
  return constantDims(type.getContext(), tensor.getShape());
}

SmallVector<int64_t> staticSizes(ArrayRef<AffineExpr> dims) {
  SmallVector<int64_t> sizes;
  for (AffineExpr dim : dims)
    sizes.push_back(constantOf(dim).value_or(ShapedType::kDynamic));
  return sizes;
}

RankedTensorType tensorOf(ArrayRef<AffineExpr> dims, Type element) {
  MLIRContext *context = element.getContext();
  AffineMap map = dimsMap(context, dims);
  SmallVector<int64_t> shape = staticSizes(map.getResults());
  if (map.getNumSymbols() == 0)
    return RankedTensorType::get(shape, element);
  return RankedTensorType::get(shape, element, DimsAttr::get(context, map));
}

RankedTensorType withDims(RankedTensorType like, ArrayRef<AffineExpr> dims) {
  return tensorOf(dims, like.getElementType());
}

bool isSymbolic(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa_and_nonnull<DimsAttr>(tensor.getEncoding());
}

bool isKilnTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return false;
  if (!tensor.getEncoding())
    return tensor.hasStaticShape() && elementCount(tensor.getShape()).has_value();
  auto encoding = dyn_cast<DimsAttr>(tensor.getEncoding());
  if (!encoding || encoding.getMap().getNumResults() != tensor.getRank() ||
      encoding.getMap().getNumSymbols() == 0)
    return false;
  for (auto [size, dim] : llvm::zip(tensor.getShape(), encoding.getMap().getResults())) {
    std::optional<int64_t> constant = constantOf(dim);
    if (constant ? size != *constant || *constant < 0 : !ShapedType::isDynamic(size))
      return false;
  }
  return true;
}

std::optional<int64_t> constantOf(AffineExpr dim) {
  if (auto constant = dyn_cast<AffineConstantExpr>(dim))
    return constant.getValue();
  return std::nullopt;
}

AffineExpr productOf(MLIRContext *context, ArrayRef<AffineExpr> dims) {
  AffineExpr product = getAffineConstantExpr(1, context);
  for (AffineExpr dim : dims)
    product = product * dim;
  return product;
}

bool sameSize(AffineExpr a, AffineExpr b) {
  if (a == b)
    return true;
  unsigned symbols = dimsMap(a.getContext(), {a, b}).getNumSymbols();
  // Products and sums of symbols (and floor divisions of them by
  // constants) that differ as expressions differ at one of these points.
  for (int64_t base : {2, 3, 7, 13, 101}) {
    SmallVector<AffineExpr> values;
    for (unsigned i = 0; i < symbols; ++i)
      values.push_back(getAffineConstantExpr(base + 17 * i, a.getContext()));
    auto at = [&](AffineExpr expr) {
      return constantOf(simplifyAffineExpr(expr.replaceSymbols(values), 0, 0));
    };
    std::optional<int64_t> x = at(a), y = at(b);
    if (!x || !y || *x != *y)
      return false;
  }
  return true;
}

namespace {

/// The factors of a product: `a * (b * c)` is a, b, c; constants multiply
/// into `constant`.
void factorsOf(AffineExpr expr, SmallVectorImpl<AffineExpr> &factors, int64_t &constant) {
  if (std::optional<int64_t> value = constantOf(expr)) {
    constant *= *value;
    return;
  }
  if (expr.getKind() == AffineExprKind::Mul) {
    auto product = cast<AffineBinaryOpExpr>(expr);
    factorsOf(product.getLHS(), factors, constant);
    factorsOf(product.getRHS(), factors, constant);
    return;
  }
  factors.push_back(expr);
}

} // namespace

std::optional<AffineExpr> remainingSize(MLIRContext *context, ArrayRef<AffineExpr> total,
                                        ArrayRef<AffineExpr> known) {
  SmallVector<AffineExpr> numerator, denominator;
  int64_t top = 1, bottom = 1;
  for (AffineExpr dim : total)
    factorsOf(dim, numerator, top);
  for (AffineExpr dim : known)
    factorsOf(dim, denominator, bottom);
  for (AffineExpr factor : denominator) {
    auto match = llvm::find(numerator, factor);
    if (match == numerator.end())
      return std::nullopt;
    numerator.erase(match);
  }
  if (bottom == 0 || top % bottom != 0)
    return std::nullopt;
  return productOf(context, numerator) * (top / bottom);
}

std::optional<Dims> broadcastDims(ArrayRef<AffineExpr> a, ArrayRef<AffineExpr> b) {
  if (a.size() < b.size())
    std::swap(a, b);
  Dims result(a);
  size_t offset = a.size() - b.size();
  for (size_t i = 0; i < b.size(); ++i) {
    AffineExpr x = a[offset + i], y = b[i];
    if (x == y || constantOf(y) == 1)
      continue;
    if (constantOf(x) == 1)
      result[offset + i] = y;
    else
      return std::nullopt;
  }
  return result;
}

std::optional<AffineExpr> windowOutputDim(AffineExpr input, int64_t kernel, int64_t stride,
                                          int64_t padBegin, int64_t padEnd, int64_t dilation,
                                          bool ceilMode) {
  if (std::optional<int64_t> size = constantOf(input)) {
    std::optional<int64_t> output =
        windowOutputSize(*size, kernel, stride, padBegin, padEnd, dilation, ceilMode);
    if (!output)
      return std::nullopt;
    return getAffineConstantExpr(*output, input.getContext());
  }
  if (ceilMode || kernel < 1 || stride < 1 || dilation < 1 || padBegin < 0 || padEnd < 0)
    return std::nullopt;
  // floor((input + pads - dilation * (kernel - 1) - 1) / stride) + 1, which
  // the symbol's range must keep at 1 or more: the runtime checks ranges.
  int64_t span, reach;
  if (llvm::MulOverflow(dilation, kernel - 1, span) || llvm::AddOverflow(padBegin, padEnd, reach) ||
      llvm::SubOverflow(span + 1, reach, reach) || span == std::numeric_limits<int64_t>::max())
    return std::nullopt;
  return (input - reach).floorDiv(stride) + 1;
}

SmallVector<std::string> symbolNames(ModuleOp module) {
  SmallVector<std::string> names;
  if (auto list = module->getAttrOfType<ArrayAttr>(kSymbolsAttr))
    for (Attribute symbol : list)
      if (auto attr = dyn_cast<SymbolAttr>(symbol))
        names.push_back(attr.getName().str());
  return names;
}

namespace {

void print(AffineExpr dim, ArrayRef<std::string> symbols, llvm::raw_ostream &os, bool inner) {
  if (auto constant = dyn_cast<AffineConstantExpr>(dim)) {
    os << constant.getValue();
    return;
  }
  if (auto symbol = dyn_cast<AffineSymbolExpr>(dim)) {
    if (symbol.getPosition() < symbols.size())
      os << symbols[symbol.getPosition()];
    else
      os << "s" << symbol.getPosition();
    return;
  }
  auto binary = cast<AffineBinaryOpExpr>(dim);
  if (inner)
    os << "(";
  print(binary.getLHS(), symbols, os, true);
  std::optional<int64_t> rhs = constantOf(binary.getRHS());
  switch (dim.getKind()) {
  case AffineExprKind::Add:
    if (rhs && *rhs < 0) {
      os << " - " << -*rhs;
      break;
    }
    os << " + ";
    print(binary.getRHS(), symbols, os, true);
    break;
  case AffineExprKind::Mul:
    os << " * ";
    print(binary.getRHS(), symbols, os, true);
    break;
  case AffineExprKind::FloorDiv:
    os << " / ";
    print(binary.getRHS(), symbols, os, true);
    break;
  case AffineExprKind::CeilDiv:
    os << " ceildiv ";
    print(binary.getRHS(), symbols, os, true);
    break;
  default:
    os << " % ";
    print(binary.getRHS(), symbols, os, true);
    break;
  }
  if (inner)
    os << ")";
}

} // namespace

std::string printDim(AffineExpr dim, ArrayRef<std::string> symbols) {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(dim, symbols, os, false);
  return text;
}

std::string printDims(ArrayRef<AffineExpr> dims, ArrayRef<std::string> symbols) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + printDim(dims[i], symbols);
  return text + "]";
}

} // namespace kiln
