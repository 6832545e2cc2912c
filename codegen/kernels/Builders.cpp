// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Builders.cpp - shared pieces of the kernel generators --------------===//

#include "codegen/kernels/Builders.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

using namespace mlir;

namespace kiln {

SmallVector<Value> symbolValues(OpBuilder &b) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto function = dyn_cast<func::FuncOp>(parent);
  if (!function)
    function = parent->getParentOfType<func::FuncOp>();
  SmallVector<Value> values;
  if (function && !function.isExternal())
    for (BlockArgument argument : function.getArguments())
      if (function.getArgAttr(argument.getArgNumber(), kSymbolArgAttr))
        values.push_back(argument);
  return values;
}

SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc, RankedTensorType type) {
  if (!isSymbolic(type))
    return {};
  SmallVector<Value> symbols = symbolValues(b);
  SmallVector<Value> sizes;
  for (auto [size, dim] : llvm::zip(type.getShape(), dimsOf(type)))
    if (ShapedType::isDynamic(size))
      sizes.push_back(affine::expandAffineExpr(b, loc, dim, ValueRange{}, symbols));
  return sizes;
}

SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, Location loc, RankedTensorType type) {
  SmallVector<Value> dynamic = dynamicSizes(b, loc, type);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0, next = 0; d < type.getRank(); ++d)
    sizes.push_back(type.isDynamicDim(d) ? OpFoldResult(dynamic[next++])
                                         : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  return sizes;
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamicSizes(b, loc, type), type.getEncoding());
}

Value dimSize(OpBuilder &b, Location loc, Value value, int64_t d) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
  return tensor::DimOp::create(b, loc, value, d);
}

AffineMap broadcastMap(RankedTensorType operand, RankedTensorType result) {
  MLIRContext *context = operand.getContext();
  int64_t offset = result.getRank() - operand.getRank();
  Dims operandDims = dimsOf(operand), resultDims = dimsOf(result);
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < operand.getRank(); ++d)
    exprs.push_back(operandDims[d] == resultDims[d + offset] ? getAffineDimExpr(d + offset, context)
                                                             : getAffineConstantExpr(0, context));
  return AffineMap::get(result.getRank(), 0, exprs, context);
}

Value elementwise(OpBuilder &b, Location loc, RankedTensorType type, ValueRange operands,
                  ScalarFn fn) {
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(broadcastMap(cast<RankedTensorType>(operand.getType()), type));
  return elementwise(b, loc, type, operands, maps, fn);
}

Value elementwise(OpBuilder &b, Location loc, RankedTensorType type, ValueRange operands,
                  ArrayRef<AffineMap> operandMaps, ScalarFn fn) {
  SmallVector<AffineMap> maps(operandMaps);
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  Value init = emptyTensor(b, loc, type);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, operands, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        linalg::YieldOp::create(nested, l, fn(nested, l, args.drop_back()));
      });
  return generic.getResult(0);
}

Value filled(OpBuilder &b, Location loc, RankedTensorType type, TypedAttr value) {
  Value init = emptyTensor(b, loc, type);
  Value fill = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, fill, init).getResult(0);
}

Value scalar(OpBuilder &b, Location loc, Type type, double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, int64_t(value)));
}

TypedAttr lowestValue(Type type, bool isUnsigned) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return FloatAttr::get(type, APFloat::getInf(floatType.getFloatSemantics(), true));
  unsigned width = type.getIntOrFloatBitWidth();
  return IntegerAttr::get(type, width == 1 || isUnsigned ? APInt(width, 0)
                                                         : APInt::getSignedMinValue(width));
}

SmallVector<Value> loopIndices(OpBuilder &b, Location loc, int64_t rank) {
  SmallVector<Value> indices;
  for (int64_t d = 0; d < rank; ++d)
    indices.push_back(linalg::IndexOp::create(b, loc, d));
  return indices;
}

TypedAttr highestValue(Type type, bool isUnsigned) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return FloatAttr::get(type, APFloat::getInf(floatType.getFloatSemantics(), false));
  unsigned width = type.getIntOrFloatBitWidth();
  return IntegerAttr::get(type, width == 1 || isUnsigned ? APInt::getMaxValue(width)
                                                         : APInt::getSignedMaxValue(width));
}

Value both(OpBuilder &b, Location loc, Value all, Value next) {
  return all ? arith::AndIOp::create(b, loc, all, next).getResult() : next;
}

bool windowOverhangs(int64_t stride, int64_t dilation, int64_t pad, int64_t kernel,
                     int64_t inputSize, int64_t outputSize) {
  if (ShapedType::isDynamic(inputSize) || ShapedType::isDynamic(outputSize))
    return true;
  int64_t last = (outputSize - 1) * stride + (kernel - 1) * dilation - pad;
  return pad > 0 || last >= inputSize;
}

WindowIndex windowIndex(OpBuilder &b, Location loc, Value output, Value offset, int64_t stride,
                        int64_t dilation, int64_t pad, int64_t kernel, OpFoldResult inputSize,
                        int64_t outputSize) {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  // A single output (a global pooling) reads from the window's offset:
  // its index is 0, and the read's index is the window loop's own.
  Value scaled = arith::MulIOp::create(b, loc, offset, index(dilation));
  Value position = outputSize == 1
                       ? scaled
                       : arith::AddIOp::create(
                             b, loc, arith::MulIOp::create(b, loc, output, index(stride)), scaled)
                             .getResult();
  position = arith::SubIOp::create(b, loc, position, index(pad));
  std::optional<int64_t> staticInput = getConstantIntValue(inputSize);
  if (!windowOverhangs(stride, dilation, pad, kernel, staticInput.value_or(ShapedType::kDynamic),
                       outputSize))
    return {position, position, Value()};
  Value end = getValueOrCreateConstantIndexOp(b, loc, inputSize);
  Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, position, index(0));
  Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, position, end);
  Value inside = arith::AndIOp::create(b, loc, low, high);
  return {position, arith::SelectOp::create(b, loc, inside, position, index(0)), inside};
}

Value windowed(OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<int64_t> window,
               ArrayRef<TypedAttr> start, WindowStep step, WindowFinish finish) {
  int64_t rank = type.getRank();
  Value init = emptyTensor(b, loc, type);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto body = [&](OpBuilder &nested, Location l, ValueRange) {
    SmallVector<Value> outputAt = loopIndices(nested, l, rank);
    SmallVector<Value> offsets(window.size());
    std::function<SmallVector<Value>(OpBuilder &, size_t, ValueRange)> level =
        [&](OpBuilder &lb, size_t i, ValueRange carried) -> SmallVector<Value> {
      if (i == window.size())
        return step(lb, l, outputAt, offsets, carried);
      auto index = [&](int64_t value) -> Value {
        return arith::ConstantIndexOp::create(lb, l, value);
      };
      auto loop = scf::ForOp::create(lb, l, index(0), index(window[i]), index(1), carried,
                                     [&](OpBuilder &inner, Location, Value k, ValueRange current) {
                                       offsets[i] = k;
                                       scf::YieldOp::create(inner, l, level(inner, i + 1, current));
                                     });
      return loop.getResults();
    };
    SmallVector<Value> initial;
    for (TypedAttr value : start)
      initial.push_back(arith::ConstantOp::create(nested, l, value));
    linalg::YieldOp::create(nested, l, finish(nested, l, level(nested, 0, initial)));
  };
  return linalg::GenericOp::create(b, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
                                   ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)}, iterators,
                                   body)
      .getResult(0);
}

Value reshape(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  return reshape(b, loc, value, RankedTensorType::get(shape, type.getElementType()));
}

Value reshape(OpBuilder &b, Location loc, Value value, RankedTensorType target) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == target.getShape() && dimsOf(type) == dimsOf(target))
    return value;
  // Symbolic: through a 1-D tensor, expanded to sizes computed from the
  // symbols.
  if (isSymbolic(type) || isSymbolic(target)) {
    Value flat = value;
    if (type.getRank() != 1) {
      auto flatType = tensorOf({productOf(b.getContext(), dimsOf(type))}, type.getElementType());
      flat = tensor::CollapseShapeOp::create(
          b, loc, flatType, value,
          ArrayRef<ReassociationIndices>{llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))});
    }
    if (target.getRank() == 1)
      return flat;
    SmallVector<OpFoldResult> sizes = mixedSizes(b, loc, target);
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, target.getRank()));
    return tensor::ExpandShapeOp::create(b, loc, target, flat, ArrayRef<ReassociationIndices>{all},
                                         sizes);
  }
  // One element to or from rank 0: the reassociation is empty.
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, target, value, ArrayRef<ReassociationIndices>{});
  if (target.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, target, value, ArrayRef<ReassociationIndices>{});
  // One collapse or one expand when the dimensions group up; otherwise
  // through a 1-D tensor.
  if (auto groups = getReassociationIndicesForReshape(type, target)) {
    if (type.getRank() > target.getRank())
      return tensor::CollapseShapeOp::create(b, loc, target, value, *groups);
    return tensor::ExpandShapeOp::create(b, loc, target, value, *groups);
  }
  Value flat = value;
  if (type.getRank() != 1) {
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({type.getNumElements()}, type.getElementType()), value,
        ArrayRef<ReassociationIndices>{all});
  }
  if (target.getRank() == 1)
    return flat;
  ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, target.getRank()));
  return tensor::ExpandShapeOp::create(b, loc, target, flat, ArrayRef<ReassociationIndices>{all});
}

Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value x, Value acc, bool isUnsigned) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case ReduceKind::Max:
    return isFloat      ? arith::MaximumFOp::create(b, loc, x, acc).getResult()
           : isUnsigned ? arith::MaxUIOp::create(b, loc, x, acc).getResult()
                        : arith::MaxSIOp::create(b, loc, x, acc).getResult();
  case ReduceKind::Min:
    return isFloat      ? arith::MinimumFOp::create(b, loc, x, acc).getResult()
           : isUnsigned ? arith::MinUIOp::create(b, loc, x, acc).getResult()
                        : arith::MinSIOp::create(b, loc, x, acc).getResult();
  case ReduceKind::Prod:
    return isFloat ? arith::MulFOp::create(b, loc, x, acc).getResult()
                   : arith::MulIOp::create(b, loc, x, acc).getResult();
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    break;
  }
  return isFloat ? arith::AddFOp::create(b, loc, x, acc).getResult()
                 : arith::AddIOp::create(b, loc, x, acc).getResult();
}

Value reduce(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> axes, bool keepdims,
             ReduceKind kind, bool isUnsigned) {
  auto type = cast<RankedTensorType>(value.getType());
  Type element = type.getElementType();
  MLIRContext *context = b.getContext();
  Dims dims = dimsOf(type), keptDims, reducedDims;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (reduced) {
      reducedDims.push_back(dims[d]);
      continue;
    }
    outExprs.push_back(getAffineDimExpr(d, context));
    keptDims.push_back(dims[d]);
  }
  AffineExpr count = productOf(context, reducedDims);
  auto outType = tensorOf(keptDims, element);
  TypedAttr identity = cast<TypedAttr>(b.getZeroAttr(element));
  if (kind == ReduceKind::Max)
    identity = lowestValue(element, isUnsigned);
  else if (kind == ReduceKind::Min)
    identity = highestValue(element, isUnsigned);
  else if (kind == ReduceKind::Prod)
    identity = isa<FloatType>(element) ? cast<TypedAttr>(b.getFloatAttr(element, 1.0))
                                       : b.getIntegerAttr(element, 1);
  Value init = filled(b, loc, outType, identity);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(type.getRank()),
                                 AffineMap::get(type.getRank(), 0, outExprs, context)};
  bool isFloat = isa<FloatType>(element);
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{outType}, ValueRange{value}, ValueRange{init}, maps, iterators,
          [&](OpBuilder &nested, Location l, ValueRange args) {
            linalg::YieldOp::create(nested, l,
                                    combine(nested, l, kind, args[0], args[1], isUnsigned));
          })
          .getResult(0);

  if (kind == ReduceKind::Mean) {
    // A symbolic count is computed once, outside the kernel.
    Value symbolicCount;
    if (!constantOf(count)) {
      Value n = arith::IndexCastOp::create(
          b, loc, b.getI64Type(),
          affine::expandAffineExpr(b, loc, count, ValueRange{}, symbolValues(b)));
      unsigned width = element.getIntOrFloatBitWidth();
      symbolicCount = isFloat       ? arith::SIToFPOp::create(b, loc, element, n).getResult()
                      : width < 64  ? arith::TruncIOp::create(b, loc, element, n).getResult()
                      : width == 64 ? n
                                    : arith::ExtSIOp::create(b, loc, element, n).getResult();
    }
    result = elementwise(b, loc, outType, ValueRange{result},
                         [&](OpBuilder &nested, Location l, ValueRange args) -> Value {
                           Value n = symbolicCount
                                         ? symbolicCount
                                         : scalar(nested, l, element, double(*constantOf(count)));
                           if (isFloat)
                             return arith::DivFOp::create(nested, l, args[0], n);
                           if (isUnsigned)
                             return arith::DivUIOp::create(nested, l, args[0], n);
                           return arith::DivSIOp::create(nested, l, args[0], n);
                         });
  }
  if (!keepdims)
    return result;
  for (int64_t axis : axes)
    dims[axis] = getAffineConstantExpr(1, context);
  return reshape(b, loc, result, tensorOf(dims, element));
}

} // namespace kiln
