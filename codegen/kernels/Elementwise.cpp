// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Elementwise.cpp - elementwise ops as linalg.generic ----------------===//
//
// Every elementwise kiln op (and Expand, a broadcast, and BatchNormalization,
// elementwise per channel) becomes one linalg.generic over its result shape.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/Builders.h"
#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {
namespace {

bool isFloat(Value v) { return isa<FloatType>(getElementTypeOrSelf(v.getType())); }

/// Signless integers and floats are what arith computes on (unsigned
/// integers were made signless by eraseSignedness).
bool hasKernelTypes(Operation *op) {
  auto ok = [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return isa<FloatType>(element) || element.isSignlessInteger();
  };
  return llvm::all_of(op->getOperandTypes(), ok) && llvm::all_of(op->getResultTypes(), ok);
}

/// `value` (f32) rounded to `format` after dividing by `scale`, then
/// multiplied back: the same arithmetic as kiln::roundTo, on integers and
/// floats the host and GPUs have (no f16 or f8 types needed).
Value roundTo(OpBuilder &b, Location loc, Value value, Precision format, float scale) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto constant = [&](float v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto word = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
  };
  Value x =
      scale == 1.0f ? value : arith::DivFOp::create(b, loc, value, constant(scale)).getResult();
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value sign = arith::AndIOp::create(b, loc, bits, word(0x80000000u));
  Value magnitude =
      arith::BitcastOp::create(b, loc, f32, arith::AndIOp::create(b, loc, bits, word(0x7fffffffu)));
  // The low `n` mantissa bits rounded away, ties to even.
  auto drop = [&](Value m, unsigned n) -> Value {
    Value mBits = arith::BitcastOp::create(b, loc, i32, m);
    Value lsb =
        arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, mBits, word(n)), word(1));
    Value sum = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, mBits, word((1u << (n - 1)) - 1)), lsb);
    return arith::AndIOp::create(b, loc, sum, word(~((1u << n) - 1)));
  };
  // A multiple of `quantum` (a power of two), ties to even: adding 2^23
  // rounds an f32 below 2^23 to an integer.
  auto quantize = [&](Value m, float quantum) -> Value {
    Value steps = arith::MulFOp::create(b, loc, m, constant(1.0f / quantum));
    Value whole = arith::SubFOp::create(
        b, loc, arith::AddFOp::create(b, loc, steps, constant(0x1p23f)), constant(0x1p23f));
    return arith::BitcastOp::create(b, loc, i32,
                                    arith::MulFOp::create(b, loc, whole, constant(quantum)));
  };
  auto below = [&](Value m, float limit) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, m, constant(limit));
  };
  Value rounded;
  switch (format) {
  case Precision::FP32:
    return value;
  case Precision::TF32:
    rounded = drop(magnitude, 13);
    break;
  case Precision::BF16:
    rounded = drop(magnitude, 16);
    break;
  case Precision::FP16: {
    Value normal = arith::SelectOp::create(b, loc, below(magnitude, 0x1p-14f),
                                           quantize(magnitude, 0x1p-24f), drop(magnitude, 13));
    Value overflow =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, magnitude, constant(65520.0f));
    rounded = arith::SelectOp::create(b, loc, overflow, word(0x7f800000u), normal);
    break;
  }
  case Precision::FP8:
  case Precision::FP8FNUZ: {
    float smallestNormal = format == Precision::FP8 ? 0x1p-6f : 0x1p-7f;
    Value saturated = arith::MinimumFOp::create(b, loc, magnitude, constant(fp8Max(format)));
    rounded = arith::SelectOp::create(b, loc, below(saturated, smallestNormal),
                                      quantize(saturated, smallestNormal / 8), drop(saturated, 20));
    break;
  }
  }
  Value result = arith::BitcastOp::create(b, loc, f32, arith::OrIOp::create(b, loc, rounded, sign));
  if (scale != 1.0f)
    result = arith::MulFOp::create(b, loc, result, constant(scale));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  return arith::SelectOp::create(b, loc, isNaN, value, result);
}

/// Converts a scalar between element types with ONNX Cast semantics;
/// `fromUnsigned` and `toUnsigned` say how to read signless integers.
Value convert(OpBuilder &b, Location loc, Value value, Type to, bool fromUnsigned = false,
              bool toUnsigned = false) {
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) // non-zero is true
    return fromFloat ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                             scalar(b, loc, from, 0.0))
                           .getResult()
                     : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                             scalar(b, loc, from, 0.0))
                           .getResult();
  if (fromFloat && toFloat)
    return fromFloat.getWidth() < toFloat.getWidth()
               ? arith::ExtFOp::create(b, loc, to, value).getResult()
               : arith::TruncFOp::create(b, loc, to, value).getResult();
  if (fromFloat)
    return toUnsigned ? arith::FPToUIOp::create(b, loc, to, value).getResult()
                      : arith::FPToSIOp::create(b, loc, to, value).getResult();
  // Booleans are 0 and 1.
  bool zeroExtend = fromUnsigned || from.isInteger(1);
  if (toFloat)
    return zeroExtend ? arith::UIToFPOp::create(b, loc, to, value).getResult()
                      : arith::SIToFPOp::create(b, loc, to, value).getResult();
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth == toWidth)
    return value;
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, to, value);
  return zeroExtend ? arith::ExtUIOp::create(b, loc, to, value).getResult()
                    : arith::ExtSIOp::create(b, loc, to, value).getResult();
}

/// The body of an elementwise op: its operands' elements to the result's.
template <typename OpT> using Body = std::function<Value(OpT, OpBuilder &, Location, ValueRange)>;

template <typename OpT> struct ElementwiseToLinalg : OpRewritePattern<OpT> {
  ElementwiseToLinalg(MLIRContext *context, Body<OpT> body, bool floatOnly)
      : OpRewritePattern<OpT>(context), body(std::move(body)), floatOnly(floatOnly) {}

  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    if (!hasKernelTypes(op) || (floatOnly && !isFloat(op->getOperand(0))))
      return rewriter.notifyMatchFailure(op, "element type without a kernel");
    Value result =
        elementwise(rewriter, op.getLoc(), cast<RankedTensorType>(op->getResult(0).getType()),
                    op->getOperands(), [&](OpBuilder &b, Location loc, ValueRange args) {
                      return body(op, b, loc, args);
                    });
    // A rounding to a product's format says so in the kernel list.
    if constexpr (std::is_same_v<OpT, RoundToOp>)
      result.getDefiningOp()->setAttr(kPrecisionAttr, op.getFormatAttr());
    rewriter.replaceOp(op, result);
    return success();
  }

  Body<OpT> body;
  bool floatOnly;
};

template <typename OpT>
void add(RewritePatternSet &patterns, Body<OpT> body, bool floatOnly = true) {
  patterns.add<ElementwiseToLinalg<OpT>>(patterns.getContext(), std::move(body), floatOnly);
}

/// An op computed by one arith or math op on floats (and another on
/// integers, and a third on unsigned integers where they differ).
template <typename OpT, typename FloatOpT, typename IntOpT = void, typename UIntOpT = IntOpT>
void addSimple(RewritePatternSet &patterns) {
  add<OpT>(
      patterns,
      [](OpT op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if constexpr (!std::is_void_v<IntOpT>)
          if (!isa<FloatType>(args[0].getType()))
            return unsignedOperand(op, 0) ? UIntOpT::create(b, loc, args).getResult()
                                          : IntOpT::create(b, loc, args).getResult();
        return FloatOpT::create(b, loc, args).getResult();
      },
      /*floatOnly=*/std::is_void_v<IntOpT>);
}

/// A signed integer divisor that cannot trap: 1 where `divisor` is zero or
/// where `dividend` is the most negative value and `divisor` -1 (x86's idiv
/// faults on both). `zero` is set to where the divisor was zero.
Value safeDivisor(OpBuilder &b, Location loc, Value dividend, Value divisor, Value &zero) {
  auto type = cast<IntegerType>(divisor.getType());
  Value one = scalar(b, loc, type, 1.0);
  zero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, scalar(b, loc, type, 0.0));
  Value lowest = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, APInt::getSignedMinValue(type.getWidth())));
  Value overflow = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dividend, lowest),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, scalar(b, loc, type, -1.0)));
  Value unsafe = arith::OrIOp::create(b, loc, zero, overflow);
  return arith::SelectOp::create(b, loc, unsafe, one, divisor);
}

Value clamp(OpBuilder &b, Location loc, Value x, double low, double high) {
  Value lower = arith::MaximumFOp::create(b, loc, x, scalar(b, loc, x.getType(), low));
  return arith::MinimumFOp::create(b, loc, lower, scalar(b, loc, x.getType(), high));
}

/// x where x > 0, else alpha * (exp(x) - 1) (ELU, and SELU and CELU
/// scaled).
Value exponentialLinear(OpBuilder &b, Location loc, Value x, double alpha) {
  Type type = x.getType();
  Value negative =
      arith::MulFOp::create(b, loc, math::ExpM1Op::create(b, loc, x), scalar(b, loc, type, alpha));
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, scalar(b, loc, type, 0.0));
  return arith::SelectOp::create(b, loc, positive, x, negative);
}

/// A comparison giving i1, on floats (ordered: false where either is NaN),
/// signed or unsigned integers.
template <typename OpT>
void addCompare(RewritePatternSet &patterns, arith::CmpFPredicate onFloat,
                arith::CmpIPredicate onInt, arith::CmpIPredicate onUnsigned) {
  add<OpT>(
      patterns,
      [=](OpT op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return arith::CmpFOp::create(b, loc, onFloat, args[0], args[1]);
        return arith::CmpIOp::create(b, loc, unsignedOperand(op, 0) ? onUnsigned : onInt, args[0],
                                     args[1]);
      },
      /*floatOnly=*/false);
}

/// An unsigned integer divisor that cannot trap: 1 where `divisor` is zero,
/// which sets `zero`.
Value safeUnsignedDivisor(OpBuilder &b, Location loc, Value divisor, Value &zero) {
  Type type = divisor.getType();
  zero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, scalar(b, loc, type, 0.0));
  return arith::SelectOp::create(b, loc, zero, scalar(b, loc, type, 1.0), divisor);
}

/// BatchNormalization: per-channel (x - mean) * scale / sqrt(var + eps) + bias.
struct BatchNormToLinalg : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    MLIRContext *context = op.getContext();
    AffineMap channel = AffineMap::get(type.getRank(), 0, getAffineDimExpr(1, context));
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(type.getRank()), channel,
                                   channel, channel, channel};
    double epsilon = op.getEpsilon().convertToDouble();
    Value result = elementwise(
        rewriter, op.getLoc(), type, op->getOperands(), maps,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value x = args[0], scale = args[1], bias = args[2], mean = args[3], var = args[4];
          Value std = math::SqrtOp::create(
              b, loc, arith::AddFOp::create(b, loc, var, scalar(b, loc, var.getType(), epsilon)));
          Value centered = arith::SubFOp::create(b, loc, x, mean);
          Value scaled =
              arith::MulFOp::create(b, loc, centered, arith::DivFOp::create(b, loc, scale, std));
          return arith::AddFOp::create(b, loc, scaled, bias);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateElementwiseKernels(RewritePatternSet &patterns) {
  addSimple<AddOp, arith::AddFOp, arith::AddIOp>(patterns);
  addSimple<SubOp, arith::SubFOp, arith::SubIOp>(patterns);
  addSimple<MulOp, arith::MulFOp, arith::MulIOp>(patterns);
  // An integer division by zero is zero, and the most negative value over
  // -1 wraps: no input makes the kernel trap.
  add<DivOp>(
      patterns,
      [](DivOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return arith::DivFOp::create(b, loc, args[0], args[1]);
        Value zero;
        Value quotient = unsignedOperand(op, 0)
                             ? arith::DivUIOp::create(b, loc, args[0],
                                                      safeUnsignedDivisor(b, loc, args[1], zero))
                                   .getResult()
                             : arith::DivSIOp::create(b, loc, args[0],
                                                      safeDivisor(b, loc, args[0], args[1], zero))
                                   .getResult();
        return arith::SelectOp::create(b, loc, zero, scalar(b, loc, args[0].getType(), 0.0),
                                       quotient);
      },
      /*floatOnly=*/false);
  addSimple<SqrtOp, math::SqrtOp>(patterns);
  addSimple<ExpOp, math::ExpOp>(patterns);
  addSimple<ErfOp, math::ErfOp>(patterns);
  addSimple<TanhOp, math::TanhOp>(patterns);
  addSimple<LogOp, math::LogOp>(patterns);
  addSimple<SinOp, math::SinOp>(patterns);
  addSimple<CosOp, math::CosOp>(patterns);
  addSimple<TanOp, math::TanOp>(patterns);
  addSimple<AsinOp, math::AsinOp>(patterns);
  addSimple<AcosOp, math::AcosOp>(patterns);
  addSimple<AtanOp, math::AtanOp>(patterns);
  addSimple<SinhOp, math::SinhOp>(patterns);
  addSimple<CoshOp, math::CoshOp>(patterns);
  addSimple<AsinhOp, math::AsinhOp>(patterns);
  addSimple<AcoshOp, math::AcoshOp>(patterns);
  addSimple<AtanhOp, math::AtanhOp>(patterns);
  addSimple<FloorOp, math::FloorOp>(patterns);
  addSimple<CeilOp, math::CeilOp>(patterns);
  addSimple<RoundOp, math::RoundEvenOp>(patterns);
  add<AbsOp>(
      patterns,
      [](AbsOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return math::AbsFOp::create(b, loc, args[0]);
        return unsignedOperand(op, 0) ? args[0] : math::AbsIOp::create(b, loc, args[0]).getResult();
      },
      /*floatOnly=*/false);
  add<NegOp>(
      patterns,
      [](NegOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return arith::NegFOp::create(b, loc, args[0]);
        return arith::SubIOp::create(b, loc, scalar(b, loc, args[0].getType(), 0.0), args[0]);
      },
      /*floatOnly=*/false);
  add<SignOp>(
      patterns,
      [](SignOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value x = args[0];
        Type type = x.getType();
        Value zero = scalar(b, loc, type, 0.0);
        bool isFloat = isa<FloatType>(type);
        bool isUnsigned = unsignedOperand(op, 0);
        auto compare = [&](bool greater) -> Value {
          if (isFloat)
            return arith::CmpFOp::create(
                b, loc, greater ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, x, zero);
          arith::CmpIPredicate predicate =
              greater ? (isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                      : (isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
          return arith::CmpIOp::create(b, loc, predicate, x, zero);
        };
        Value sign = arith::SelectOp::create(
            b, loc, compare(true), scalar(b, loc, type, 1.0),
            arith::SelectOp::create(b, loc, compare(false), scalar(b, loc, type, -1.0), zero));
        if (!isFloat)
          return sign;
        // NaN stays NaN.
        Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
        return arith::SelectOp::create(b, loc, nan, x, sign);
      },
      /*floatOnly=*/false);
  add<ReciprocalOp>(patterns, [](ReciprocalOp, OpBuilder &b, Location loc, ValueRange args) {
    return arith::DivFOp::create(b, loc, scalar(b, loc, args[0].getType(), 1.0), args[0]);
  });
  add<SoftplusOp>(patterns, [](SoftplusOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    // max(x, 0) + log1p(exp(-|x|)): exp never overflows.
    Value x = args[0];
    Value zero = scalar(b, loc, x.getType(), 0.0);
    Value tail = math::Log1pOp::create(
        b, loc,
        math::ExpOp::create(b, loc,
                            arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x))));
    return arith::AddFOp::create(b, loc, arith::MaximumFOp::create(b, loc, x, zero), tail);
  });
  add<SoftsignOp>(patterns, [](SoftsignOp, OpBuilder &b, Location loc, ValueRange args) {
    Value one = scalar(b, loc, args[0].getType(), 1.0);
    return arith::DivFOp::create(
        b, loc, args[0], arith::AddFOp::create(b, loc, one, math::AbsFOp::create(b, loc, args[0])));
  });
  add<EluOp>(patterns, [](EluOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
    return exponentialLinear(b, loc, args[0], op.getAlpha().convertToDouble());
  });
  add<SeluOp>(patterns, [](SeluOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
    Value elu = exponentialLinear(b, loc, args[0], op.getAlpha().convertToDouble());
    return arith::MulFOp::create(
        b, loc, elu, scalar(b, loc, args[0].getType(), op.getGamma().convertToDouble()));
  });
  add<CeluOp>(patterns, [](CeluOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
    // alpha * elu_1(x / alpha): x where x > 0, else alpha * (exp(x / alpha) - 1).
    Type type = args[0].getType();
    double alpha = op.getAlpha().convertToDouble();
    Value scaled = arith::DivFOp::create(b, loc, args[0], scalar(b, loc, type, alpha));
    return arith::MulFOp::create(b, loc, exponentialLinear(b, loc, scaled, 1.0),
                                 scalar(b, loc, type, alpha));
  });
  add<ThresholdedReluOp>(
      patterns, [](ThresholdedReluOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        Type type = args[0].getType();
        Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, args[0],
                                            scalar(b, loc, type, op.getAlpha().convertToDouble()));
        return arith::SelectOp::create(b, loc, above, args[0], scalar(b, loc, type, 0.0));
      });
  add<IsNaNOp>(patterns, [](IsNaNOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, args[0], args[0]);
  });
  add<IsInfOp>(patterns, [](IsInfOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
    Type type = args[0].getType();
    double inf = std::numeric_limits<double>::infinity();
    auto equals = [&](double value) -> Value {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, args[0],
                                   scalar(b, loc, type, value));
    };
    if (op.getDetectPositive() && op.getDetectNegative())
      return arith::OrIOp::create(b, loc, equals(inf), equals(-inf));
    if (op.getDetectPositive())
      return equals(inf);
    if (op.getDetectNegative())
      return equals(-inf);
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  });

  // An integer base is raised in f64 and truncated toward zero.
  add<PowOp>(
      patterns,
      [](PowOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        Type type = args[0].getType();
        if (isa<FloatType>(type))
          return math::PowFOp::create(b, loc, args[0],
                                      convert(b, loc, args[1], type, unsignedOperand(op, 1)));
        Type f64 = b.getF64Type();
        Value power =
            math::PowFOp::create(b, loc, convert(b, loc, args[0], f64, unsignedOperand(op, 0)),
                                 convert(b, loc, args[1], f64, unsignedOperand(op, 1)));
        return convert(b, loc, power, type, false, unsignedResult(op, 0));
      },
      /*floatOnly=*/false);
  add<EqualOp>(
      patterns,
      [](EqualOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, args[0], args[1]);
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, args[0], args[1]);
      },
      /*floatOnly=*/false);
  addCompare<GreaterOp>(patterns, arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
                        arith::CmpIPredicate::ugt);
  addCompare<LessOp>(patterns, arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
                     arith::CmpIPredicate::ult);
  addCompare<GreaterOrEqualOp>(patterns, arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
                               arith::CmpIPredicate::uge);
  addCompare<LessOrEqualOp>(patterns, arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
                            arith::CmpIPredicate::ule);
  // minimumf and maximumf propagate NaN.
  addSimple<MinOp, arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(patterns);
  addSimple<MaxOp, arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(patterns);
  addSimple<AndOp, arith::AndIOp, arith::AndIOp>(patterns);
  addSimple<OrOp, arith::OrIOp, arith::OrIOp>(patterns);
  addSimple<XorOp, arith::XOrIOp, arith::XOrIOp>(patterns);
  // A shift by the width or more gives zero (LLVM's shifts would be
  // poison).
  add<BitShiftOp>(
      patterns,
      [](BitShiftOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value x = args[0], amount = args[1];
        Type type = x.getType();
        Value shifted = op.getLeft() ? arith::ShLIOp::create(b, loc, x, amount).getResult()
                                     : arith::ShRUIOp::create(b, loc, x, amount).getResult();
        Value tooFar =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, amount,
                                  scalar(b, loc, type, double(type.getIntOrFloatBitWidth())));
        return arith::SelectOp::create(b, loc, tooFar, scalar(b, loc, type, 0.0), shifted);
      },
      /*floatOnly=*/false);
  add<NotOp>(
      patterns,
      [](NotOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
        // All ones: true for i1, every bit for wider integers.
        return arith::XOrIOp::create(b, loc, args[0], scalar(b, loc, args[0].getType(), -1.0));
      },
      /*floatOnly=*/false);
  add<ModOp>(
      patterns,
      [](ModOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value x = args[0], y = args[1];
        Type type = x.getType();
        if (isa<FloatType>(type)) {
          // C's fmod; a remainder by zero is zero.
          Value zero = scalar(b, loc, type, 0.0);
          Value byZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, y, zero);
          return arith::SelectOp::create(b, loc, byZero, zero, arith::RemFOp::create(b, loc, x, y));
        }
        Value byZero;
        Value zero = scalar(b, loc, type, 0.0);
        if (unsignedOperand(op, 0)) {
          Value r = arith::RemUIOp::create(b, loc, x, safeUnsignedDivisor(b, loc, y, byZero));
          return arith::SelectOp::create(b, loc, byZero, zero, r);
        }
        Value divisor = safeDivisor(b, loc, x, y, byZero);
        Value r = arith::RemSIOp::create(b, loc, x, divisor);
        if (!op.getFmod()) {
          // Python's %: a non-zero remainder takes the divisor's sign.
          Value differ = arith::XOrIOp::create(
              b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, y, zero));
          Value adjust = arith::AndIOp::create(
              b, loc, differ, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero));
          r = arith::SelectOp::create(b, loc, adjust, arith::AddIOp::create(b, loc, r, y), r);
        }
        return arith::SelectOp::create(b, loc, byZero, zero, r);
      },
      /*floatOnly=*/false);
  add<PReluOp>(patterns, [](PReluOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, args[0],
                                           scalar(b, loc, args[0].getType(), 0.0));
    return arith::SelectOp::create(b, loc, negative,
                                   arith::MulFOp::create(b, loc, args[0], args[1]), args[0]);
  });
  add<WhereOp>(
      patterns,
      [](WhereOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
      },
      /*floatOnly=*/false);
  add<CastOp>(
      patterns,
      [](CastOp op, OpBuilder &b, Location loc, ValueRange args) {
        return convert(b, loc, args[0], op.getTo(), unsignedOperand(op, 0), unsignedResult(op, 0));
      },
      /*floatOnly=*/false);
  // Expand is a broadcast: the body passes the element through.
  add<ExpandOp>(
      patterns, [](ExpandOp, OpBuilder &, Location, ValueRange args) { return args[0]; },
      /*floatOnly=*/false);

  add<ReluOp>(patterns, [](ReluOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    // maximumf propagates NaN, as ONNX's Relu does.
    return arith::MaximumFOp::create(b, loc, args[0], scalar(b, loc, args[0].getType(), 0.0));
  });
  add<SigmoidOp>(patterns, [](SigmoidOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    Value one = scalar(b, loc, args[0].getType(), 1.0);
    Value exp = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, args[0]));
    return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, exp));
  });
  add<LeakyReluOp>(patterns,
                   [](LeakyReluOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
                     Type type = args[0].getType();
                     Value scaled = arith::MulFOp::create(
                         b, loc, args[0], scalar(b, loc, type, op.getAlpha().convertToDouble()));
                     Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                                            args[0], scalar(b, loc, type, 0.0));
                     return arith::SelectOp::create(b, loc, positive, args[0], scaled);
                   });
  add<HardSigmoidOp>(
      patterns, [](HardSigmoidOp op, OpBuilder &b, Location loc, ValueRange args) -> Value {
        Type type = args[0].getType();
        Value linear = math::FmaOp::create(b, loc, args[0],
                                           scalar(b, loc, type, op.getAlpha().convertToDouble()),
                                           scalar(b, loc, type, op.getBeta().convertToDouble()));
        return clamp(b, loc, linear, 0.0, 1.0);
      });
  add<HardSwishOp>(patterns, [](HardSwishOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    Type type = args[0].getType();
    Value gate = math::FmaOp::create(b, loc, args[0], scalar(b, loc, type, 1.0 / 6.0),
                                     scalar(b, loc, type, 0.5));
    return arith::MulFOp::create(b, loc, args[0], clamp(b, loc, gate, 0.0, 1.0));
  });
  add<GeluOp>(patterns, [](GeluOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    Type type = args[0].getType();
    Value erf = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, args[0], scalar(b, loc, type, M_SQRT1_2)));
    Value half = arith::MulFOp::create(b, loc, args[0], scalar(b, loc, type, 0.5));
    return math::FmaOp::create(b, loc, half, erf, half);
  });
  add<RoundToOp>(patterns, [](RoundToOp op, OpBuilder &b, Location loc, ValueRange args) {
    return roundTo(b, loc, args[0], *parsePrecision(op.getFormat()),
                   op.getScale().convertToFloat());
  });
  add<ClipOp>(patterns, [](ClipOp op, OpBuilder &b, Location loc, ValueRange args) {
    return clamp(b, loc, args[0], op.getMin().convertToDouble(), op.getMax().convertToDouble());
  });

  patterns.add<BatchNormToLinalg>(patterns.getContext());
}

} // namespace kiln
