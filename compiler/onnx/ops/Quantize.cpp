// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Quantize.cpp - QuantizeLinear and DequantizeLinear -----------------===//
//
// Both run in f32 as elementwise composites: quantizing divides by the
// scale, rounds half to even, adds the zero point and saturates to the
// integer type; dequantizing subtracts the zero point in i32 and multiplies
// by the scale. A per-axis scale (and zero point) broadcasts along `axis`.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

namespace {

/// The range of the integer types kiln quantizes to.
std::optional<std::pair<double, double>> integerRange(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer || (integer.getWidth() != 8 && integer.getWidth() != 16))
    return std::nullopt;
  double span = std::ldexp(1.0, integer.getWidth());
  if (integer.isUnsigned())
    return std::pair{0.0, span - 1};
  return std::pair{-span / 2, span / 2 - 1};
}

/// A scale or zero point (input `index`) shaped to broadcast against an
/// input of type `type`: per tensor as it is, per axis as [C, 1, ..., 1].
Value perAxis(NodeContext &ctx, int index, RankedTensorType type) {
  RankedTensorType paramType = ctx.inputType(index);
  if (ctx.intAttr("block_size", 0) != 0) {
    ctx.error() << "blocked quantization (block_size) is not supported";
    return {};
  }
  if (paramType.getNumElements() == 1 && paramType.getRank() <= 1)
    return paramType.getRank() == 0 ? ctx.input(index) : ctx.reshape(ctx.input(index), {});
  std::optional<int64_t> axis = ctx.axisAttr(1, type.getRank());
  if (!axis)
    return {};
  if (paramType.getRank() != 1 || paramType.getDimSize(0) != type.getDimSize(*axis)) {
    ctx.error() << "input " << index << " has shape " << paramType
                << "; a per-axis parameter must have one element per index of axis " << *axis
                << " (" << type.getDimSize(*axis) << ")";
    return {};
  }
  SmallVector<int64_t> shape(type.getRank() - *axis, 1);
  shape[0] = type.getDimSize(*axis);
  return ctx.reshape(ctx.input(index), shape);
}

LogicalResult convertQuantizeLinear(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Builder &b = ctx.builder();
  RankedTensorType type = ctx.inputType(0);
  Type f32 = b.getF32Type();
  Type result =
      ctx.hasInput(2) ? ctx.inputType(2).getElementType() : b.getIntegerType(8, /*isSigned=*/false);
  std::optional<std::pair<double, double>> range = integerRange(result);
  if (!range)
    return ctx.error() << "quantizing to " << result
                       << " is not supported; kiln quantizes to 8- and 16-bit integers";
  Value x = ctx.castTo(ctx.input(0), f32);
  Value scale = ctx.castTo(perAxis(ctx, 1, type), f32);
  Value scaled = x && scale ? ctx.make<DivOp>({x, scale}) : Value();
  Value q = scaled ? ctx.make<RoundOp>({scaled}) : Value();
  if (q && ctx.hasInput(2)) {
    Value zeroPoint = ctx.castTo(perAxis(ctx, 2, type), f32);
    q = zeroPoint ? ctx.make<AddOp>({q, zeroPoint}) : Value();
  }
  q = q ? ctx.make<MaxOp>({q, ctx.scalarConstant(f32, range->first)}) : Value();
  q = q ? ctx.make<MinOp>({q, ctx.scalarConstant(f32, range->second)}) : Value();
  return ctx.setResult(ctx.castTo(q, result));
}

LogicalResult convertDequantizeLinear(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Builder &b = ctx.builder();
  RankedTensorType type = ctx.inputType(0);
  Type element = type.getElementType(), i32 = b.getI32Type(), f32 = b.getF32Type();
  Type result = ctx.inputType(1).getElementType();
  if (!integerRange(element) && !element.isInteger(32))
    return ctx.error() << "dequantizing " << element
                       << " is not supported; kiln dequantizes 8-, 16- and 32-bit integers";
  Value x = ctx.castTo(ctx.input(0), i32);
  if (x && ctx.hasInput(2)) {
    Value zeroPoint = ctx.castTo(perAxis(ctx, 2, type), i32);
    x = zeroPoint ? ctx.make<SubOp>({x, zeroPoint}) : Value();
  }
  Value scale = ctx.castTo(perAxis(ctx, 1, type), f32);
  Value real = ctx.castTo(x, f32);
  Value y = real && scale ? ctx.make<MulOp>({real, scale}) : Value();
  return ctx.setResult(ctx.castTo(y, result));
}

} // namespace

void registerQuantizeOperators(OperatorTable &ops) {
  ops.onOp("DequantizeLinear", 10, convertDequantizeLinear);
  ops.onOp("QuantizeLinear", 10, convertQuantizeLinear);
}

} // namespace kiln
