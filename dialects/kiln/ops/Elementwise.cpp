//===- Elementwise.cpp - constants, elementwise ops and casts -------------===//

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"
#include "dialects/kiln/Shapes.h"
#include "dialects/kiln/ops/Fold.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;

namespace kiln {

//===----------------------------------------------------------------------===//
// kiln.constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOptionalError(location, "constant value must have a static tensor type");
  types.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Binary elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult inferBinaryResult(std::optional<Location> location, Type lhs, Type rhs,
                                BinaryElementRule rule, SmallVectorImpl<Type> &types) {
  auto lhsType = cast<RankedTensorType>(lhs), rhsType = cast<RankedTensorType>(rhs);
  if (rule != BinaryElementRule::Base && lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(location, "operand element types differ: ", lhsType.getElementType(),
                             " vs ", rhsType.getElementType());
  auto shape = broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (!shape)
    return emitOptionalError(location, "operand shapes ", lhs, " and ", rhs, " do not broadcast");
  Type element = rule == BinaryElementRule::Bool ? IntegerType::get(lhs.getContext(), 1)
                                                 : lhsType.getElementType();
  types.push_back(RankedTensorType::get(*shape, element));
  return success();
}

namespace {

/// Folds an arithmetic op over integer or float elements.
template <typename IntFn, typename FloatFn>
OpFoldResult foldArith(ArrayRef<Attribute> operands, Type type, IntFn intFn, FloatFn floatFn) {
  return foldElementwise(operands, cast<RankedTensorType>(type),
                         [&](ArrayRef<Attribute> args, Type element) -> Attribute {
                           if (auto a = dyn_cast<IntegerAttr>(args[0])) {
                             auto b = dyn_cast<IntegerAttr>(args[1]);
                             std::optional<APInt> value = intFn(a.getValue(), b.getValue());
                             return value ? IntegerAttr::get(element, *value) : Attribute();
                           }
                           auto a = cast<FloatAttr>(args[0]), b = cast<FloatAttr>(args[1]);
                           return FloatAttr::get(element, floatFn(a.getValue(), b.getValue()));
                         });
}

} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a + b; },
      [](const APFloat &a, const APFloat &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a - b; },
      [](const APFloat &a, const APFloat &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a * b; },
      [](const APFloat &a, const APFloat &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  return foldArith(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        // Integer division truncates; never fold a division by zero or the
        // one signed division that overflows.
        if (b.isZero())
          return std::nullopt;
        if (isUnsigned)
          return a.udiv(b);
        if (a.isMinSignedValue() && b.isAllOnes())
          return std::nullopt;
        return a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) { return a / b; });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  return foldElementwise({adaptor.getLhs(), adaptor.getRhs()}, getType(),
                         [](ArrayRef<Attribute> args, Type element) -> Attribute {
                           double base = cast<FloatAttr>(args[0]).getValueAsDouble();
                           double exponent =
                               isa<FloatAttr>(args[1])
                                   ? cast<FloatAttr>(args[1]).getValueAsDouble()
                                   : double(cast<IntegerAttr>(args[1]).getValue().getSExtValue());
                           return FloatAttr::get(element, std::pow(base, exponent));
                         });
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldElementwise({adaptor.getLhs(), adaptor.getRhs()}, getType(),
                         [](ArrayRef<Attribute> args, Type element) -> Attribute {
                           bool equal;
                           if (auto a = dyn_cast<IntegerAttr>(args[0]))
                             equal = a.getValue() == cast<IntegerAttr>(args[1]).getValue();
                           else
                             equal = cast<FloatAttr>(args[0]).getValue() ==
                                     cast<FloatAttr>(args[1]).getValue();
                           return IntegerAttr::get(element, equal);
                         });
}

//===----------------------------------------------------------------------===//
// kiln.where
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto cond = cast<RankedTensorType>(adaptor.getCondition().getType());
  auto onTrue = cast<RankedTensorType>(adaptor.getOnTrue().getType());
  auto onFalse = cast<RankedTensorType>(adaptor.getOnFalse().getType());
  if (onTrue.getElementType() != onFalse.getElementType())
    return emitOptionalError(location, "branch element types differ: ", onTrue.getElementType(),
                             " vs ", onFalse.getElementType());
  auto shape = broadcastShapes(onTrue.getShape(), onFalse.getShape());
  if (shape)
    shape = broadcastShapes(cond.getShape(), *shape);
  if (!shape)
    return emitOptionalError(location, "operand shapes do not broadcast");
  types.push_back(RankedTensorType::get(*shape, onTrue.getElementType()));
  return success();
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  return foldElementwise({adaptor.getCondition(), adaptor.getOnTrue(), adaptor.getOnFalse()},
                         getType(), [](ArrayRef<Attribute> args, Type) -> Attribute {
                           return cast<IntegerAttr>(args[0]).getValue().isZero() ? args[2]
                                                                                 : args[1];
                         });
}

//===----------------------------------------------------------------------===//
// kiln.clip
//===----------------------------------------------------------------------===//

LogicalResult RoundToOp::verify() {
  std::optional<Precision> format = parsePrecision(getFormat());
  if (!format || *format == Precision::FP32)
    return emitOpError("format must be tf32, fp16, bf16 or fp8, not '") << getFormat() << "'";
  float scale = getScale().convertToFloat();
  if (!(scale > 0.0f) || !std::isfinite(scale))
    return emitOpError("scale must be positive and finite, not ") << scale;
  if (!getType().getElementType().isF32())
    return emitOpError("rounds f32 tensors only");
  return success();
}

LogicalResult ClipOp::verify() {
  if (getMin() > getMax())
    return emitOpError("min ") << getMin().convertToDouble() << " exceeds max "
                               << getMax().convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// kiln.cast
//===----------------------------------------------------------------------===//

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  Type to = adaptor.getTo();
  if (!isa<FloatType, IntegerType>(to))
    return emitOptionalError(location, "cannot cast to ", to);
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  types.push_back(input.clone(to));
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return foldElementwise(
      {adaptor.getInput()}, getType(), [](ArrayRef<Attribute> args, Type element) -> Attribute {
        if (auto to = dyn_cast<IntegerType>(element)) {
          if (auto from = dyn_cast<IntegerAttr>(args[0])) {
            const APInt &value = from.getValue();
            // ONNX casts to bool test for non-zero; other integers wrap.
            if (to.getWidth() == 1)
              return IntegerAttr::get(element, !value.isZero());
            bool isSigned =
                from.getType().getIntOrFloatBitWidth() > 1 && !from.getType().isUnsignedInteger();
            return IntegerAttr::get(element, isSigned ? value.sextOrTrunc(to.getWidth())
                                                      : value.zextOrTrunc(to.getWidth()));
          }
          APFloat value = cast<FloatAttr>(args[0]).getValue();
          if (to.getWidth() == 1)
            return IntegerAttr::get(element, !value.isZero());
          APSInt result(to.getWidth(), to.isUnsigned());
          bool exact;
          if (value.convertToInteger(result, APFloat::rmTowardZero, &exact) & APFloat::opInvalidOp)
            return {};
          return IntegerAttr::get(element, result);
        }
        auto to = cast<FloatType>(element);
        APFloat result(to.getFloatSemantics());
        if (auto from = dyn_cast<IntegerAttr>(args[0])) {
          bool isSigned =
              from.getType().getIntOrFloatBitWidth() > 1 && !from.getType().isUnsignedInteger();
          result.convertFromAPInt(from.getValue(), isSigned, APFloat::rmNearestTiesToEven);
        } else {
          result = cast<FloatAttr>(args[0]).getValue();
          bool losesInfo;
          result.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
        }
        return FloatAttr::get(element, result);
      });
}

} // namespace kiln
