// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- NodeContext.cpp - what an operator converter sees ------------------===//

#include "compiler/onnx/NodeContext.h"
#include "dialects/kiln/Shapes.h"
#include "dialects/kiln/Weights.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln {

NodeContext::NodeContext(onnx::NodeProto &node, int64_t opset, llvm::StringRef file,
                         llvm::StringRef modelDir, llvm::StringRef displayName, OpBuilder &builder,
                         llvm::StringMap<Value> &values, const llvm::StringSet<> &consumed,
                         SymbolRanges &symbols)
    : node_(node), opset_(opset), file_(file), modelDir_(modelDir), displayName_(displayName),
      builder_(builder), values_(values), consumed_(consumed), symbols_(symbols),
      loc_(NameLoc::get(builder.getStringAttr(displayName))) {}

InFlightDiagnostic NodeContext::error() {
  return emitError(UnknownLoc::get(builder_.getContext()))
         << file_ << ": node '" << displayName_ << "' (" << node_.op_type() << ", opset " << opset_
         << "): ";
}

std::optional<int64_t> NodeContext::largestValue(AffineExpr size) const {
  if (auto range = symbols_.bounds(size))
    return range->second;
  return std::nullopt;
}

LogicalResult NodeContext::requireAtMost(AffineExpr size, int64_t bound, StringRef why) {
  return requireBound(size, bound, /*atMost=*/true, why);
}

LogicalResult NodeContext::requireAtLeast(AffineExpr size, int64_t bound, StringRef why) {
  return requireBound(size, bound, /*atMost=*/false, why);
}

LogicalResult NodeContext::requireBound(AffineExpr size, int64_t bound, bool atMost,
                                        StringRef why) {
  std::vector<std::string> names = symbols_.names();
  std::string relation =
      " (" + printDim(size, names) + (atMost ? " <= " : " >= ") + std::to_string(bound) + ")";
  std::optional<std::pair<int64_t, int64_t>> range = symbols_.bounds(size);
  if (range && (atMost ? range->second <= bound : range->first >= bound))
    return success();
  // A symbol plus a constant narrows the symbol's range.
  AffineExpr symbolPart = size;
  int64_t offset = 0;
  if (auto sum = dyn_cast<AffineBinaryOpExpr>(size);
      sum && size.getKind() == AffineExprKind::Add && constantOf(sum.getRHS())) {
    symbolPart = sum.getLHS();
    offset = *constantOf(sum.getRHS());
  }
  auto symbol = dyn_cast<AffineSymbolExpr>(symbolPart);
  if (!symbol)
    return error() << "it " << why << relation
                   << ", which kiln cannot ensure by narrowing one symbol's range";
  auto &[name, known] = symbols_.symbols[symbol.getPosition()];
  int64_t limit;
  if (llvm::SubOverflow(bound, offset, limit))
    return error() << "it " << why << relation << ", which no size satisfies";
  if (atMost ? limit < known.min : limit > known.max)
    return error() << "it " << why << relation << ", but symbol '" << name << "' takes "
                   << (atMost ? "at least " : "at most ") << (atMost ? known.min : known.max);
  DimRange narrowed = known;
  (atMost ? narrowed.max : narrowed.min) = limit;
  narrowed.opt = std::clamp(known.opt, narrowed.min, narrowed.max);
  emitWarning(UnknownLoc::get(builder_.getContext()))
      << file_ << ": node '" << displayName_ << "' (" << node_.op_type() << "): symbol '" << name
      << "' narrowed from " << known.min << ".." << known.max << " to " << narrowed.min << ".."
      << narrowed.max << ": the node " << why << relation;
  known = narrowed;
  return success();
}

bool NodeContext::hasInput(int index) const {
  return index < node_.input_size() && !node_.input(index).empty();
}

LogicalResult NodeContext::requireInputs(int count) {
  for (int i = 0; i < count; ++i)
    if (!hasInput(i))
      return error() << "input " << i << " is missing";
  return success();
}

LogicalResult NodeContext::requireFloat(int index) {
  Type element = inputType(index).getElementType();
  if (!isa<FloatType>(element))
    return error() << "the operator on " << element
                   << " tensors is not supported; kiln supports it on floats";
  return success();
}

Value NodeContext::input(int index) const { return values_.lookup(node_.input(index)); }

RankedTensorType NodeContext::inputType(int index) const {
  return cast<RankedTensorType>(input(index).getType());
}

void NodeContext::notConstant(int index, StringRef what, StringRef kind) {
  InFlightDiagnostic diag = error() << what << " (input " << index << ") must be " << kind
                                    << " that kiln can compute when compiling";
  if (!hasInput(index))
    return;
  // The graph inputs it is computed from, breadth first.
  llvm::SetVector<Value> seen;
  seen.insert(input(index));
  SmallVector<std::string> sources;
  for (size_t i = 0; i < seen.size(); ++i) {
    if (auto argument = dyn_cast<BlockArgument>(seen[i])) {
      auto func = cast<func::FuncOp>(argument.getOwner()->getParentOp());
      if (auto name = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(), "kiln.name"))
        sources.push_back(name.str());
    } else if (Operation *op = seen[i].getDefiningOp()) {
      seen.insert(op->operand_begin(), op->operand_end());
    }
  }
  if (sources.empty())
    return;
  llvm::sort(sources);
  diag << "; it comes from graph input" << (sources.size() == 1 ? " '" : "s '")
       << llvm::join(sources, "', '") << "', whose value --input-value "
       << (sources.size() == 1 ? sources[0] : "NAME") << "=FILE.npy fixes when compiling";
}

DenseElementsAttr NodeContext::constantValue(int index) const {
  ElementsAttr attr;
  if (!hasInput(index) || !matchPattern(input(index), m_Constant(&attr)))
    return {};
  return denseOf(attr);
}

std::optional<SmallVector<int64_t>> NodeContext::constantInts(int index, StringRef what) {
  DenseElementsAttr attr = constantValue(index);
  if (!attr || !isa<IntegerType>(attr.getElementType())) {
    notConstant(index, what, "a constant integer tensor");
    return std::nullopt;
  }
  SmallVector<int64_t> values;
  for (const APInt &value : attr.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

std::optional<Dims> NodeContext::sizeInts(int index, StringRef what) {
  if (auto sizes = input(index).getDefiningOp<DimsOp>())
    return Dims(sizes.getValue().getMap().getResults());
  std::optional<SmallVector<int64_t>> values = constantInts(index, what);
  if (!values)
    return std::nullopt;
  return constantDims(builder_.getContext(), *values);
}

std::optional<SmallVector<double>> NodeContext::constantFloats(int index, StringRef what) {
  DenseElementsAttr attr = constantValue(index);
  if (!attr || !isa<FloatType>(attr.getElementType())) {
    notConstant(index, what, "a constant float tensor");
    return std::nullopt;
  }
  SmallVector<double> values;
  for (const APFloat &value : attr.getValues<APFloat>())
    values.push_back(value.convertToDouble());
  return values;
}

std::optional<double> NodeContext::constantScalar(int index, StringRef what) {
  DenseElementsAttr attr = constantValue(index);
  if (!attr || attr.getNumElements() != 1) {
    notConstant(index, what, "a constant scalar");
    return std::nullopt;
  }
  Attribute value = *attr.value_begin<Attribute>();
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  auto integer = cast<IntegerAttr>(value);
  if (integer.getType().isUnsignedInteger())
    return double(integer.getValue().getZExtValue());
  return double(integer.getValue().getSExtValue());
}

DenseElementsAttr NodeContext::constantTensor(int index, StringRef what) {
  DenseElementsAttr attr = constantValue(index);
  if (!attr) {
    notConstant(index, what, "a constant tensor");
    return {};
  }
  return attr;
}

Attribute elementAttr(Type element, double value) {
  if (isa<FloatType>(element))
    return FloatAttr::get(element, value);
  return IntegerAttr::get(element, int64_t(value));
}

Value NodeContext::scalarConstant(Type element, double value) {
  auto type = RankedTensorType::get({}, element);
  return constant(DenseElementsAttr::get(type, elementAttr(element, value)));
}

Value NodeContext::constant(ElementsAttr value) {
  return ConstantOp::create(builder_, loc_, value.getShapedType(), value);
}

Value NodeContext::reshape(Value value, ArrayRef<int64_t> shape) {
  return make<ReshapeOp>({value}, {named("shape", builder_.getDenseI64ArrayAttr(shape))});
}

SmallVector<NamedAttribute> NodeContext::targetAttrs(ArrayRef<AffineExpr> dims) {
  SmallVector<int64_t> shape = staticSizes(dims);
  SmallVector<NamedAttribute> attributes = {named("shape", builder_.getDenseI64ArrayAttr(shape))};
  if (llvm::is_contained(shape, ShapedType::kDynamic))
    attributes.push_back(
        named("dims", DimsAttr::get(builder_.getContext(), dimsMap(builder_.getContext(), dims))));
  return attributes;
}

Value NodeContext::reshapeDims(Value value, ArrayRef<AffineExpr> dims) {
  return make<ReshapeOp>({value}, targetAttrs(dims));
}

Value NodeContext::castTo(Value value, Type to) {
  if (!value || cast<RankedTensorType>(value.getType()).getElementType() == to)
    return value;
  return make<CastOp>({value}, {named("to", TypeAttr::get(to))});
}

const onnx::AttributeProto *NodeContext::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attr : node_.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t NodeContext::intAttr(StringRef name, int64_t otherwise) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->i() : otherwise;
}

float NodeContext::floatAttr(StringRef name, float otherwise) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->f() : otherwise;
}

std::string NodeContext::stringAttr(StringRef name, StringRef otherwise) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->s() : otherwise.str();
}

std::optional<SmallVector<int64_t>> NodeContext::intsAttr(StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

bool NodeContext::isOutputUsed(int index) const {
  return index < node_.output_size() && !node_.output(index).empty() &&
         consumed_.contains(node_.output(index));
}

void NodeContext::setOutput(int index, Value value) {
  if (index < node_.output_size() && !node_.output(index).empty())
    values_[node_.output(index)] = value;
}

LogicalResult NodeContext::setResult(Value value) {
  if (!value)
    return failure();
  setOutput(0, value);
  return success();
}

std::optional<int64_t> NodeContext::axisAttr(int64_t otherwise, int64_t rank) {
  int64_t given = intAttr("axis", otherwise);
  std::optional<int64_t> axis = normalizeAxis(given, rank);
  if (!axis)
    error() << "axis " << given << " is out of range for rank " << rank;
  return axis;
}

std::optional<SmallVector<Value>> NodeContext::createImpl(StringRef name, InferFn infer,
                                                          ValueRange operands,
                                                          ArrayRef<NamedAttribute> attributes,
                                                          unsigned numResults) {
  MLIRContext *context = builder_.getContext();
  OperationState state(loc_, name);
  state.addOperands(operands);
  state.addAttributes(attributes);
  // Result types are not known until inference has looked at the op's
  // operands and (property-held) attributes, so it starts with placeholders.
  state.addTypes(SmallVector<Type>(numResults, NoneType::get(context)));
  Operation *op = builder_.create(state);

  // Diagnostics from inference and verification become this node's error.
  std::string reason;
  SmallVector<Type> types;
  bool valid;
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      if (reason.empty())
        reason = diag.str();
      return success();
    });
    valid = succeeded(infer(context, loc_, op->getOperands(), op->getRawDictionaryAttrs(),
                            op->getPropertiesStorage(), op->getRegions(), types)) &&
            types.size() == numResults;
    if (valid) {
      for (auto [result, type] : llvm::zip(op->getResults(), types))
        result.setType(type);
      valid = succeeded(verify(op));
    }
  }
  if (!valid) {
    op->erase();
    error() << (reason.empty() ? std::string("invalid operands or attributes") : reason);
    return std::nullopt;
  }
  // No size in the symbols' ranges may make a dimension negative (a window
  // wider than a small image, a slice past a short sequence): the ranges
  // narrow, or the node is refused.
  for (Value result : op->getResults()) {
    if (!isSymbolic(result.getType()))
      continue;
    for (auto [d, dim] : llvm::enumerate(dimsOf(result.getType())))
      if (!constantOf(dim) &&
          failed(requireAtLeast(dim, 0, "gives its result dimension " + std::to_string(d)))) {
        op->erase();
        return std::nullopt;
      }
  }

  SmallVector<Value> results(op->getResults());
  SmallVector<OpFoldResult> folded;
  if (failed(op->fold(folded)) || folded.empty())
    return results;
  SmallVector<Value> replacements;
  for (auto [result, fold] : llvm::zip(op->getResults(), folded)) {
    if (auto value = dyn_cast<Value>(fold)) {
      replacements.push_back(value);
      continue;
    }
    Operation *constant = op->getDialect()->materializeConstant(builder_, cast<Attribute>(fold),
                                                                result.getType(), loc_);
    if (!constant)
      return results;
    replacements.push_back(constant->getResult(0));
  }
  op->erase();
  return replacements;
}

} // namespace kiln
