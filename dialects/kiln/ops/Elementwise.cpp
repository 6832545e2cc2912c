// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Elementwise.cpp - constants, elementwise ops and casts -------------===//

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"
#include "dialects/kiln/Shapes.h"
#include "dialects/kiln/ops/Fold.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
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
// kiln.dims
//===----------------------------------------------------------------------===//

LogicalResult DimsOp::verify() {
  if (!getType().hasStaticShape() || getType().getRank() > 1 ||
      getType().getNumElements() != int64_t(getValue().getMap().getNumResults()))
    return emitOpError("holds ") << getValue().getMap().getNumResults() << " sizes, not "
                                 << getType();
  return success();
}

OpFoldResult DimsOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Binary elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult inferBinaryResult(std::optional<Location> location, Type lhs, Type rhs,
                                BinaryElementRule rule, SmallVectorImpl<Type> &types) {
  auto lhsType = cast<RankedTensorType>(lhs), rhsType = cast<RankedTensorType>(rhs);
  if (rule != BinaryElementRule::Base && lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(location, "operand element types differ: ", lhsType.getElementType(),
                             " vs ", rhsType.getElementType());
  auto dims = broadcastDims(dimsOf(lhsType), dimsOf(rhsType));
  if (!dims)
    return emitOptionalError(location, "operand shapes ", lhs, " and ", rhs, " do not broadcast");
  Type element = rule == BinaryElementRule::Bool ? IntegerType::get(lhs.getContext(), 1)
                                                 : lhsType.getElementType();
  types.push_back(tensorOf(*dims, element));
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

/// Folds arithmetic on sizes where an operand is a kiln.dims value: each
/// element `compute(a, b)`, or nothing when it gives up.
Attribute foldSizes(ArrayRef<Attribute> operands, Type type,
                    function_ref<std::optional<AffineExpr>(AffineExpr, AffineExpr)> compute) {
  auto result = cast<RankedTensorType>(type);
  if (!symbolicElements(operands[0]) && !symbolicElements(operands[1]))
    return {};
  std::optional<Dims> a = sizeElements(operands[0]), b = sizeElements(operands[1]);
  if (!a || !b || !result.hasStaticShape() || result.getRank() > 1)
    return {};
  int64_t count = result.getNumElements();
  Dims elements;
  for (int64_t i = 0; i < count; ++i) {
    std::optional<AffineExpr> value =
        compute((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]);
    if (!value)
      return {};
    elements.push_back(*value);
  }
  return sizesAttr(result, elements);
}

} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (Attribute sizes = foldSizes({adaptor.getLhs(), adaptor.getRhs()}, getType(),
                                  [](AffineExpr a, AffineExpr b) { return a + b; }))
    return sizes;
  return foldArith(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a + b; },
      [](const APFloat &a, const APFloat &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Attribute sizes = foldSizes({adaptor.getLhs(), adaptor.getRhs()}, getType(),
                                  [](AffineExpr a, AffineExpr b) { return a - b; }))
    return sizes;
  return foldArith(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a - b; },
      [](const APFloat &a, const APFloat &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Attribute sizes = foldSizes({adaptor.getLhs(), adaptor.getRhs()}, getType(),
                                  [](AffineExpr a, AffineExpr b) { return a * b; }))
    return sizes;
  return foldArith(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a * b; },
      [](const APFloat &a, const APFloat &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  // Sizes are never negative, so ONNX's truncating division of one by a
  // positive constant is a floor division.
  if (Attribute sizes = foldSizes({adaptor.getLhs(), adaptor.getRhs()}, getType(),
                                  [](AffineExpr a, AffineExpr b) -> std::optional<AffineExpr> {
                                    if (constantOf(b).value_or(0) <= 0)
                                      return std::nullopt;
                                    return a.floorDiv(b);
                                  }))
    return sizes;
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
                           auto number = [](Attribute value) {
                             if (auto f = dyn_cast<FloatAttr>(value))
                               return f.getValueAsDouble();
                             auto integer = cast<IntegerAttr>(value);
                             return integer.getType().isUnsignedInteger()
                                        ? double(integer.getValue().getZExtValue())
                                        : double(integer.getValue().getSExtValue());
                           };
                           double power = std::pow(number(args[0]), number(args[1]));
                           if (isa<FloatType>(element))
                             return FloatAttr::get(element, power);
                           // Truncated toward zero; out of range, no fold.
                           unsigned width = element.getIntOrFloatBitWidth();
                           bool isUnsigned = element.isUnsignedInteger();
                           if (!std::isfinite(power) ||
                               power >= std::ldexp(1.0, width - (isUnsigned ? 0 : 1)) ||
                               power <= (isUnsigned ? -1.0 : -std::ldexp(1.0, width - 1) - 1))
                             return {};
                           APSInt result(width, isUnsigned);
                           bool exact;
                           APFloat(power).convertToInteger(result, APFloat::rmTowardZero, &exact);
                           return IntegerAttr::get(element, result);
                         });
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  // Sizes are never negative: the -1 exporters compare shapes with (to
  // replace it by 1, as Reshape would infer it) is never one. Any other
  // comparison of a symbolic size is known only at run time.
  if (symbolicElements(adaptor.getLhs()) || symbolicElements(adaptor.getRhs())) {
    std::optional<Dims> a = sizeElements(adaptor.getLhs()), b = sizeElements(adaptor.getRhs());
    RankedTensorType type = getType();
    if (!a || !b || !type.hasStaticShape() || type.getRank() > 1)
      return {};
    SmallVector<bool> equal;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
      AffineExpr x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
      std::optional<int64_t> cx = constantOf(x), cy = constantOf(y);
      if (x == y)
        equal.push_back(true);
      else if ((cx && cy) || (cx && *cx < 0) || (cy && *cy < 0))
        equal.push_back(false);
      else
        return {};
    }
    return DenseElementsAttr::get(type, ArrayRef<bool>(equal));
  }
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

namespace {

/// The order of two integer or float elements; nothing for NaN.
std::optional<int> compareElements(Attribute a, Attribute b, bool isUnsigned) {
  if (auto x = dyn_cast<IntegerAttr>(a)) {
    const APInt &l = x.getValue(), &r = cast<IntegerAttr>(b).getValue();
    if (isUnsigned ? l.ult(r) : l.slt(r))
      return -1;
    return l == r ? 0 : 1;
  }
  switch (cast<FloatAttr>(a).getValue().compare(cast<FloatAttr>(b).getValue())) {
  case APFloat::cmpLessThan:
    return -1;
  case APFloat::cmpEqual:
    return 0;
  case APFloat::cmpGreaterThan:
    return 1;
  case APFloat::cmpUnordered:
    return std::nullopt;
  }
  llvm_unreachable("an APFloat comparison without a result");
}

/// Folds a comparison: `holds` says whether an order (-1, 0, 1) satisfies
/// it; NaN satisfies none.
OpFoldResult foldCompare(Operation *op, ArrayRef<Attribute> operands,
                         llvm::function_ref<bool(int)> holds) {
  bool isUnsigned = getElementTypeOrSelf(op->getOperand(0).getType()).isUnsignedInteger();
  return foldElementwise(operands, cast<RankedTensorType>(op->getResult(0).getType()),
                         [&](ArrayRef<Attribute> args, Type element) -> Attribute {
                           std::optional<int> order = compareElements(args[0], args[1], isUnsigned);
                           return IntegerAttr::get(element, order && holds(*order));
                         });
}

/// Folds Min or Max: `first` says whether the first element is kept when the
/// two are ordered as `order`. NaN wins.
OpFoldResult foldChoice(Operation *op, ArrayRef<Attribute> operands,
                        llvm::function_ref<bool(int)> first) {
  bool isUnsigned = getElementTypeOrSelf(op->getOperand(0).getType()).isUnsignedInteger();
  return foldElementwise(operands, cast<RankedTensorType>(op->getResult(0).getType()),
                         [&](ArrayRef<Attribute> args, Type) -> Attribute {
                           std::optional<int> order = compareElements(args[0], args[1], isUnsigned);
                           if (!order)
                             return cast<FloatAttr>(args[0]).getValue().isNaN() ? args[0] : args[1];
                           return first(*order) ? args[0] : args[1];
                         });
}

/// Folds a float function of one operand, computed in double and rounded
/// to the element type.
OpFoldResult foldFloat(Attribute input, Type type, double (*function)(double)) {
  return foldElementwise({input}, cast<RankedTensorType>(type),
                         [&](ArrayRef<Attribute> args, Type element) -> Attribute {
                           return FloatAttr::get(
                               element, function(cast<FloatAttr>(args[0]).getValueAsDouble()));
                         });
}

/// Folds an op of one integer or float operand.
OpFoldResult foldNumeric(Attribute input, Type type, llvm::function_ref<APInt(const APInt &)> onInt,
                         double (*onFloat)(double)) {
  return foldElementwise({input}, cast<RankedTensorType>(type),
                         [&](ArrayRef<Attribute> args, Type element) -> Attribute {
                           if (auto x = dyn_cast<IntegerAttr>(args[0]))
                             return IntegerAttr::get(element, onInt(x.getValue()));
                           return FloatAttr::get(
                               element, onFloat(cast<FloatAttr>(args[0]).getValueAsDouble()));
                         });
}

/// Folds an op of two i1 operands.
/// Folds a logical operator, bitwise on wider integers.
OpFoldResult foldLogical(ArrayRef<Attribute> operands, Type type,
                         llvm::function_ref<APInt(const APInt &, const APInt &)> function) {
  return foldElementwise(operands, cast<RankedTensorType>(type),
                         [&](ArrayRef<Attribute> args, Type element) -> Attribute {
                           return IntegerAttr::get(element,
                                                   function(cast<IntegerAttr>(args[0]).getValue(),
                                                            cast<IntegerAttr>(args[1]).getValue()));
                         });
}

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
double sign(double x) { return std::isnan(x) ? x : double((x > 0) - (x < 0)); }

} // namespace

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldCompare(*this, adaptor.getOperands(), [](int order) { return order > 0; });
}
OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldCompare(*this, adaptor.getOperands(), [](int order) { return order < 0; });
}
OpFoldResult GreaterOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(*this, adaptor.getOperands(), [](int order) { return order >= 0; });
}
OpFoldResult LessOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(*this, adaptor.getOperands(), [](int order) { return order <= 0; });
}
OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldChoice(*this, adaptor.getOperands(), [](int order) { return order <= 0; });
}
OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldChoice(*this, adaptor.getOperands(), [](int order) { return order >= 0; });
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  bool fmod = getFmod();
  return foldElementwise(
      adaptor.getOperands(), getType(), [&](ArrayRef<Attribute> args, Type element) -> Attribute {
        if (auto a = dyn_cast<IntegerAttr>(args[0])) {
          const APInt &x = a.getValue(), &y = cast<IntegerAttr>(args[1]).getValue();
          if (y.isZero())
            return IntegerAttr::get(element, APInt::getZero(x.getBitWidth()));
          if (isUnsigned)
            return IntegerAttr::get(element, x.urem(y));
          // srem of the most negative value by -1 is 0, as it should be.
          APInt r = y.isAllOnes() ? APInt::getZero(x.getBitWidth()) : x.srem(y);
          if (!fmod && !r.isZero() && r.isNegative() != y.isNegative())
            r += y;
          return IntegerAttr::get(element, r);
        }
        double x = cast<FloatAttr>(args[0]).getValueAsDouble();
        double y = cast<FloatAttr>(args[1]).getValueAsDouble();
        return FloatAttr::get(element, y == 0 ? 0.0 : std::fmod(x, y));
      });
}

OpFoldResult PReluOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(adaptor.getOperands(), getType(),
                         [](ArrayRef<Attribute> args, Type element) -> Attribute {
                           double x = cast<FloatAttr>(args[0]).getValueAsDouble();
                           double slope = cast<FloatAttr>(args[1]).getValueAsDouble();
                           return FloatAttr::get(element, x < 0 ? slope * x : x);
                         });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldLogical(adaptor.getOperands(), getType(),
                     [](const APInt &a, const APInt &b) { return a & b; });
}
OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldLogical(adaptor.getOperands(), getType(),
                     [](const APInt &a, const APInt &b) { return a | b; });
}
OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldLogical(adaptor.getOperands(), getType(),
                     [](const APInt &a, const APInt &b) { return a ^ b; });
}
OpFoldResult BitShiftOp::fold(FoldAdaptor adaptor) {
  bool left = getLeft();
  return foldLogical(adaptor.getOperands(), getType(), [left](const APInt &a, const APInt &b) {
    if (b.uge(a.getBitWidth()))
      return APInt::getZero(a.getBitWidth());
    return left ? a.shl(b) : a.lshr(b);
  });
}
OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  return foldLogical({adaptor.getInput(), adaptor.getInput()}, getType(),
                     [](const APInt &a, const APInt &) { return ~a; });
}

#define KILN_FOLD_FLOAT(Op, function)                                                              \
  OpFoldResult Op::fold(FoldAdaptor adaptor) {                                                     \
    return foldFloat(adaptor.getInput(), getType(), function);                                     \
  }
KILN_FOLD_FLOAT(LogOp, [](double x) { return std::log(x); })
KILN_FOLD_FLOAT(SinOp, [](double x) { return std::sin(x); })
KILN_FOLD_FLOAT(CosOp, [](double x) { return std::cos(x); })
KILN_FOLD_FLOAT(TanOp, [](double x) { return std::tan(x); })
KILN_FOLD_FLOAT(AsinOp, [](double x) { return std::asin(x); })
KILN_FOLD_FLOAT(AcosOp, [](double x) { return std::acos(x); })
KILN_FOLD_FLOAT(AtanOp, [](double x) { return std::atan(x); })
KILN_FOLD_FLOAT(SinhOp, [](double x) { return std::sinh(x); })
KILN_FOLD_FLOAT(CoshOp, [](double x) { return std::cosh(x); })
KILN_FOLD_FLOAT(AsinhOp, [](double x) { return std::asinh(x); })
KILN_FOLD_FLOAT(AcoshOp, [](double x) { return std::acosh(x); })
KILN_FOLD_FLOAT(AtanhOp, [](double x) { return std::atanh(x); })
KILN_FOLD_FLOAT(FloorOp, [](double x) { return std::floor(x); })
KILN_FOLD_FLOAT(CeilOp, [](double x) { return std::ceil(x); })
KILN_FOLD_FLOAT(RoundOp, [](double x) { return std::nearbyint(x); })
KILN_FOLD_FLOAT(ReciprocalOp, [](double x) { return 1.0 / x; })
KILN_FOLD_FLOAT(SoftplusOp, softplus)
KILN_FOLD_FLOAT(SoftsignOp, [](double x) { return x / (1.0 + std::abs(x)); })
#undef KILN_FOLD_FLOAT

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  return foldNumeric(
      adaptor.getInput(), getType(), [&](const APInt &x) { return isUnsigned ? x : x.abs(); },
      [](double x) { return std::abs(x); });
}
OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldNumeric(
      adaptor.getInput(), getType(), [](const APInt &x) { return -x; },
      [](double x) { return -x; });
}
OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getType().getElementType().isUnsignedInteger();
  return foldNumeric(
      adaptor.getInput(), getType(),
      [&](const APInt &x) {
        unsigned bits = x.getBitWidth();
        if (x.isZero())
          return APInt::getZero(bits);
        return !isUnsigned && x.isNegative() ? APInt::getAllOnes(bits) : APInt(bits, 1);
      },
      sign);
}

OpFoldResult IsNaNOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(
      {adaptor.getInput()}, getType(), [](ArrayRef<Attribute> args, Type element) -> Attribute {
        return IntegerAttr::get(element, cast<FloatAttr>(args[0]).getValue().isNaN());
      });
}
OpFoldResult IsInfOp::fold(FoldAdaptor adaptor) {
  bool positive = getDetectPositive(), negative = getDetectNegative();
  return foldElementwise(
      {adaptor.getInput()}, getType(), [&](ArrayRef<Attribute> args, Type element) -> Attribute {
        const APFloat &x = cast<FloatAttr>(args[0]).getValue();
        return IntegerAttr::get(element, x.isInfinity() && (x.isNegative() ? negative : positive));
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
  auto dims = broadcastDims(dimsOf(onTrue), dimsOf(onFalse));
  if (dims)
    dims = broadcastDims(dimsOf(cond), *dims);
  if (!dims)
    return emitOptionalError(location, "operand shapes do not broadcast");
  types.push_back(tensorOf(*dims, onTrue.getElementType()));
  return success();
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  // A known condition choosing among sizes.
  if (symbolicElements(adaptor.getOnTrue()) || symbolicElements(adaptor.getOnFalse())) {
    DenseElementsAttr condition = foldableConstant(adaptor.getCondition());
    std::optional<Dims> onTrue = sizeElements(adaptor.getOnTrue());
    std::optional<Dims> onFalse = sizeElements(adaptor.getOnFalse());
    RankedTensorType type = getType();
    if (!condition || !onTrue || !onFalse || !type.hasStaticShape() || type.getRank() > 1)
      return {};
    auto chosen = llvm::to_vector(condition.getValues<bool>());
    Dims sizes;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
      bool pick = chosen[chosen.size() == 1 ? 0 : i];
      const Dims &from = pick ? *onTrue : *onFalse;
      sizes.push_back(from[from.size() == 1 ? 0 : i]);
    }
    return sizesAttr(type, sizes);
  }
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
    return emitOpError("format must be tf32, fp16, bf16, fp8 or fp8-fnuz, not '")
           << getFormat() << "'";
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
  // Sizes fit every integer type exporters cast shapes to.
  if (std::optional<Dims> sizes = symbolicElements(adaptor.getInput()))
    return isa<IntegerType>(getType().getElementType()) && getType().getElementTypeBitWidth() >= 32
               ? sizesAttr(getType(), *sizes)
               : Attribute();
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
