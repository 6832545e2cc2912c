// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Builders.cpp - shared pieces of the kernel generators --------------===//

#include "codegen/kernels/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

using namespace mlir;

namespace kiln {

AffineMap broadcastMap(RankedTensorType operand, RankedTensorType result) {
  MLIRContext *context = operand.getContext();
  int64_t offset = result.getRank() - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < operand.getRank(); ++d)
    exprs.push_back(operand.getDimSize(d) == result.getDimSize(d + offset)
                        ? getAffineDimExpr(d + offset, context)
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
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, operands, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        linalg::YieldOp::create(nested, l, fn(nested, l, args.drop_back()));
      });
  return generic.getResult(0);
}

Value filled(OpBuilder &b, Location loc, RankedTensorType type, TypedAttr value) {
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
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
  int64_t last = (outputSize - 1) * stride + (kernel - 1) * dilation - pad;
  return pad > 0 || last >= inputSize;
}

WindowIndex windowIndex(OpBuilder &b, Location loc, Value output, Value offset, int64_t stride,
                        int64_t dilation, int64_t pad, int64_t kernel, int64_t inputSize,
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
  if (!windowOverhangs(stride, dilation, pad, kernel, inputSize, outputSize))
    return {position, position, Value()};
  Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, position, index(0));
  Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, position, index(inputSize));
  Value inside = arith::AndIOp::create(b, loc, low, high);
  return {position, arith::SelectOp::create(b, loc, inside, position, index(0)), inside};
}

Value windowed(OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<int64_t> window,
               ArrayRef<TypedAttr> start, WindowStep step, WindowFinish finish) {
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
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
  if (type.getShape() == shape)
    return value;
  auto target = RankedTensorType::get(shape, type.getElementType());
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
  SmallVector<int64_t> kept, keptShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  int64_t count = 1;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (reduced) {
      count *= type.getDimSize(d);
      continue;
    }
    outExprs.push_back(getAffineDimExpr(d, context));
    keptShape.push_back(type.getDimSize(d));
  }
  auto outType = RankedTensorType::get(keptShape, element);
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
    result = elementwise(b, loc, outType, ValueRange{result},
                         [&](OpBuilder &nested, Location l, ValueRange args) -> Value {
                           Value n = scalar(nested, l, element, double(count));
                           if (isFloat)
                             return arith::DivFOp::create(nested, l, args[0], n);
                           if (isUnsigned)
                             return arith::DivUIOp::create(nested, l, args[0], n);
                           return arith::DivSIOp::create(nested, l, args[0], n);
                         });
  }
  if (!keepdims)
    return result;
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t axis : axes)
    shape[axis] = 1;
  return reshape(b, loc, result, shape);
}

} // namespace kiln
