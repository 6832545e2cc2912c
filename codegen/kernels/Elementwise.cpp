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

using namespace mlir;

namespace kiln {
namespace {

bool isFloat(Value v) { return isa<FloatType>(getElementTypeOrSelf(v.getType())); }

/// Signless integers and floats are what arith computes on; unsigned
/// integer tensors have no kernels yet.
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
  case Precision::FP8: {
    Value saturated = arith::MinimumFOp::create(b, loc, magnitude, constant(kFP8Max));
    rounded = arith::SelectOp::create(b, loc, below(saturated, 0x1p-6f),
                                      quantize(saturated, 0x1p-9f), drop(saturated, 20));
    break;
  }
  }
  Value result = arith::BitcastOp::create(b, loc, f32, arith::OrIOp::create(b, loc, rounded, sign));
  if (scale != 1.0f)
    result = arith::MulFOp::create(b, loc, result, constant(scale));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  return arith::SelectOp::create(b, loc, isNaN, value, result);
}

/// Converts a scalar between element types with ONNX Cast semantics.
Value convert(OpBuilder &b, Location loc, Value value, Type to) {
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
    return arith::FPToSIOp::create(b, loc, to, value);
  if (toFloat) // booleans are 0 and 1, other integers signed
    return from.isInteger(1) ? arith::UIToFPOp::create(b, loc, to, value).getResult()
                             : arith::SIToFPOp::create(b, loc, to, value).getResult();
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, to, value);
  return from.isInteger(1) ? arith::ExtUIOp::create(b, loc, to, value).getResult()
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

/// An op computed by one arith or math op on floats (and another on integers).
template <typename OpT, typename FloatOpT, typename IntOpT = void>
void addSimple(RewritePatternSet &patterns) {
  add<OpT>(
      patterns,
      [](OpT, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if constexpr (!std::is_void_v<IntOpT>)
          if (!isa<FloatType>(args[0].getType()))
            return IntOpT::create(b, loc, args).getResult();
        return FloatOpT::create(b, loc, args).getResult();
      },
      /*floatOnly=*/std::is_void_v<IntOpT>);
}

Value clamp(OpBuilder &b, Location loc, Value x, double low, double high) {
  Value lower = arith::MaximumFOp::create(b, loc, x, scalar(b, loc, x.getType(), low));
  return arith::MinimumFOp::create(b, loc, lower, scalar(b, loc, x.getType(), high));
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
  addSimple<DivOp, arith::DivFOp, arith::DivSIOp>(patterns);
  addSimple<SqrtOp, math::SqrtOp>(patterns);
  addSimple<ExpOp, math::ExpOp>(patterns);
  addSimple<ErfOp, math::ErfOp>(patterns);
  addSimple<TanhOp, math::TanhOp>(patterns);

  add<PowOp>(patterns, [](PowOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
    Value exponent = convert(b, loc, args[1], args[0].getType());
    return math::PowFOp::create(b, loc, args[0], exponent);
  });
  add<EqualOp>(
      patterns,
      [](EqualOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, args[0], args[1]);
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, args[0], args[1]);
      },
      /*floatOnly=*/false);
  add<WhereOp>(
      patterns,
      [](WhereOp, OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
      },
      /*floatOnly=*/false);
  add<CastOp>(
      patterns,
      [](CastOp op, OpBuilder &b, Location loc, ValueRange args) {
        return convert(b, loc, args[0], op.getTo());
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
