// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Elementwise.cpp - elementwise ONNX operators -----------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "compiler/onnx/Tensors.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;

namespace kiln {

namespace {

/// `OpT` of the node's one input, of any numeric type.
template <typename OpT> LogicalResult unary(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  return ctx.emit<OpT>({ctx.input(0)});
}

/// Reports an error unless the node has its one input and it holds floats.
LogicalResult requireFloatInput(NodeContext &ctx) {
  return failure(failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)));
}

/// `OpT` of the node's one input, which holds floats.
template <typename OpT> LogicalResult floatUnary(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  return ctx.emit<OpT>({ctx.input(0)});
}

/// `OpT` of the node's two inputs.
template <typename OpT> LogicalResult binary(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  return ctx.emit<OpT>({ctx.input(0), ctx.input(1)});
}

/// The node's float attribute `name` (`otherwise` when absent), as an f32
/// attribute of the same name.
NamedAttribute floatNamed(NodeContext &ctx, StringRef name, float otherwise) {
  return ctx.named(name, ctx.builder().getF32FloatAttr(ctx.floatAttr(name, otherwise)));
}

/// `OpT` of a float input with an `alpha` attribute (`otherwise` when absent).
template <typename OpT> Converter withAlpha(float otherwise) {
  return [otherwise](NodeContext &ctx) {
    if (failed(requireFloatInput(ctx)))
      return failure();
    return ctx.emit<OpT>({ctx.input(0)}, {floatNamed(ctx, "alpha", otherwise)});
  };
}

LogicalResult convertWhere(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  return ctx.emit<WhereOp>({ctx.input(0), ctx.input(1), ctx.input(2)});
}

LogicalResult convertMod(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  bool fmod = ctx.intAttr("fmod", 0) != 0;
  if (!fmod && isa<FloatType>(ctx.inputType(0).getElementType()))
    return ctx.error() << "Mod of floats needs fmod = 1 (ONNX defines fmod = 0 for integers only)";
  return ctx.emit<ModOp>({ctx.input(0), ctx.input(1)},
                         {ctx.named("fmod", ctx.builder().getBoolAttr(fmod))});
}

LogicalResult convertBitShift(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  std::string direction = ctx.stringAttr("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return ctx.error() << "direction '" << direction << "' is neither LEFT nor RIGHT";
  if (!ctx.inputType(0).getElementType().isUnsignedInteger())
    return ctx.error() << "the operator on " << ctx.inputType(0).getElementType()
                       << " tensors is not supported; ONNX defines it on unsigned integers";
  return ctx.emit<BitShiftOp>({ctx.input(0), ctx.input(1)},
                              {ctx.named("left", ctx.builder().getBoolAttr(direction == "LEFT"))});
}

LogicalResult convertPRelu(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  // The slope broadcasts to X, never X to the slope.
  auto shape = broadcastShapes(ctx.inputType(0).getShape(), ctx.inputType(1).getShape());
  if (shape && *shape != ctx.inputType(0).getShape())
    return ctx.error() << "the slope's shape " << ctx.inputType(1)
                       << " does not broadcast to the input's " << ctx.inputType(0);
  return ctx.emit<PReluOp>({ctx.input(0), ctx.input(1)});
}

LogicalResult convertGelu(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  std::string approximate = ctx.stringAttr("approximate", "none");
  if (approximate != "none")
    return ctx.error() << "approximate='" << approximate
                       << "' is not supported (only the exact form, 'none')";
  return ctx.emit<GeluOp>({ctx.input(0)});
}

LogicalResult convertHardSigmoid(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  return ctx.emit<HardSigmoidOp>({ctx.input(0)},
                                 {floatNamed(ctx, "alpha", 0.2f), floatNamed(ctx, "beta", 0.5f)});
}

LogicalResult convertSelu(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  return ctx.emit<SeluOp>({ctx.input(0)}, {floatNamed(ctx, "alpha", 1.67326319217681884765625f),
                                           floatNamed(ctx, "gamma", 1.05070102214813232421875f)});
}

LogicalResult convertIsInf(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  Builder &b = ctx.builder();
  return ctx.emit<IsInfOp>(
      {ctx.input(0)},
      {ctx.named("detect_positive", b.getBoolAttr(ctx.intAttr("detect_positive", 1))),
       ctx.named("detect_negative", b.getBoolAttr(ctx.intAttr("detect_negative", 1)))});
}

LogicalResult convertMish(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  // x * tanh(softplus(x)): the three ops fuse into one kernel.
  auto softplus = ctx.create<SoftplusOp>({ctx.input(0)});
  if (!softplus)
    return failure();
  auto tanh = ctx.create<TanhOp>({softplus->front()});
  if (!tanh)
    return failure();
  return ctx.emit<MulOp>({ctx.input(0), tanh->front()});
}

LogicalResult convertShrink(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  // x + bias below -lambd, x - bias above lambd, 0 between.
  Value x = ctx.input(0);
  auto scalar = [&](double value) {
    return ctx.scalarConstant(ctx.inputType(0).getElementType(), value);
  };
  double lambd = ctx.floatAttr("lambd", 0.5f), bias = ctx.floatAttr("bias", 0.0f);
  auto below = ctx.create<LessOp>({x, scalar(-lambd)});
  auto above = below ? ctx.create<GreaterOp>({x, scalar(lambd)}) : std::nullopt;
  auto raised = above ? ctx.create<AddOp>({x, scalar(bias)}) : std::nullopt;
  auto lowered = raised ? ctx.create<SubOp>({x, scalar(bias)}) : std::nullopt;
  auto outer =
      lowered ? ctx.create<WhereOp>({above->front(), lowered->front(), scalar(0)}) : std::nullopt;
  if (!outer)
    return failure();
  return ctx.emit<WhereOp>({below->front(), raised->front(), outer->front()});
}

/// Min, Max or Sum of any number of inputs, broadcast: a chain of `OpT`.
/// Mean is the Sum divided by the count.
template <typename OpT, bool mean = false> LogicalResult variadic(NodeContext &ctx) {
  if (ctx.node().input_size() < 1)
    return ctx.error() << ctx.node().op_type() << " needs at least one input";
  if (failed(ctx.requireInputs(ctx.node().input_size())))
    return failure();
  Value result = ctx.input(0);
  for (int i = 1; i < ctx.node().input_size(); ++i) {
    std::optional<SmallVector<Value>> next = ctx.create<OpT>({result, ctx.input(i)});
    if (!next)
      return failure();
    result = next->front();
  }
  if (mean) {
    if (failed(ctx.requireFloat(0)))
      return failure();
    Value count =
        ctx.scalarConstant(ctx.inputType(0).getElementType(), double(ctx.node().input_size()));
    return ctx.emit<DivOp>({result, count});
  }
  ctx.setOutput(0, result);
  return success();
}

LogicalResult convertClip(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  // From opset 11 the bounds are optional inputs; an absent one is
  // unbounded. Float tensors with constant bounds are one kiln.clip (its
  // bounds attributes); integers and bounds known only at run time are
  // min(max(x, low), high).
  auto isConstant = [&](int index) {
    DenseElementsAttr value;
    return !ctx.hasInput(index) || matchPattern(ctx.input(index), m_Constant(&value));
  };
  if (!isa<FloatType>(ctx.inputType(0).getElementType()) || !isConstant(1) || !isConstant(2)) {
    Value result = ctx.input(0);
    if (ctx.hasInput(1))
      result = ctx.make<MaxOp>({result, ctx.input(1)});
    if (result && ctx.hasInput(2))
      result = ctx.make<MinOp>({result, ctx.input(2)});
    if (!result)
      return failure();
    ctx.setOutput(0, result);
    return success();
  }
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  if (ctx.hasInput(1))
    low = *ctx.constantScalar(1, "the minimum");
  if (ctx.hasInput(2))
    high = *ctx.constantScalar(2, "the maximum");
  Builder &b = ctx.builder();
  return ctx.emit<ClipOp>({ctx.input(0)}, {ctx.named("min", b.getF64FloatAttr(low)),
                                           ctx.named("max", b.getF64FloatAttr(high))});
}

/// Cast, or CastLike when `like`: the element type of the second input.
LogicalResult convertCast(NodeContext &ctx, bool like) {
  if (failed(ctx.requireInputs(like ? 2 : 1)))
    return failure();
  Type element;
  if (like) {
    element = ctx.inputType(1).getElementType();
  } else {
    const onnx::AttributeProto *to = ctx.attribute("to");
    if (!to)
      return ctx.error() << "attribute 'to' is missing";
    element = elementTypeOf(*ctx.builder().getContext(), int32_t(to->i()));
    if (!element)
      return ctx.error() << "cannot cast to " << onnxTypeName(int32_t(to->i()))
                         << ", which kiln does not support";
  }
  Value input = ctx.input(0);
  // From opset 19, casts to float8 saturate by default: out-of-range values
  // become the largest finite value instead of NaN or infinity.
  auto target = dyn_cast<FloatType>(element);
  if (target && target.getWidth() == 8 && ctx.intAttr("saturate", 1) != 0 &&
      isa<FloatType>(ctx.inputType(0).getElementType())) {
    double largest = APFloat::getLargest(target.getFloatSemantics()).convertToDouble();
    Builder &b = ctx.builder();
    auto clipped = ctx.create<ClipOp>({input}, {ctx.named("min", b.getF64FloatAttr(-largest)),
                                                ctx.named("max", b.getF64FloatAttr(largest))});
    if (!clipped)
      return failure();
    input = clipped->front();
  }
  return ctx.emit<CastOp>({input}, {ctx.named("to", TypeAttr::get(element))});
}

} // namespace

void registerElementwiseOperators(OperatorTable &ops) {
  // Of two operands, broadcast.
  ops.onOp("Add", 1, binary<AddOp>);
  ops.onOp("And", 1, binary<AndOp>);
  ops.onOp("BitShift", 11, convertBitShift);
  ops.onOp("BitwiseAnd", 18, binary<AndOp>);
  ops.onOp("BitwiseOr", 18, binary<OrOp>);
  ops.onOp("BitwiseXor", 18, binary<XorOp>);
  ops.onOp("Div", 1, binary<DivOp>);
  ops.onOp("Equal", 1, binary<EqualOp>);
  ops.onOp("Greater", 1, binary<GreaterOp>);
  ops.onOp("GreaterOrEqual", 12, binary<GreaterOrEqualOp>);
  ops.onOp("Less", 1, binary<LessOp>);
  ops.onOp("LessOrEqual", 12, binary<LessOrEqualOp>);
  ops.onOp("Mod", 10, convertMod);
  ops.onOp("Mul", 1, binary<MulOp>);
  ops.onOp("Or", 1, binary<OrOp>);
  ops.onOp("PRelu", 1, convertPRelu);
  ops.onOp("Pow", 1, binary<PowOp>);
  ops.onOp("Sub", 1, binary<SubOp>);
  ops.onOp("Where", 9, convertWhere);
  ops.onOp("Xor", 1, binary<XorOp>);

  // Of any number of operands.
  ops.onOp("Max", 1, variadic<MaxOp>);
  ops.onOp("Mean", 1, variadic<AddOp, /*mean=*/true>);
  ops.onOp("Min", 1, variadic<MinOp>);
  ops.onOp("Sum", 1, variadic<AddOp>);

  // Of one operand of any numeric type.
  ops.onOp("Abs", 1, unary<AbsOp>);
  ops.onOp("BitwiseNot", 18, unary<NotOp>);
  ops.onOp("Neg", 1, unary<NegOp>);
  ops.onOp("Not", 1, unary<NotOp>);
  ops.onOp("Sign", 9, unary<SignOp>);

  // Of one float operand.
  ops.onOp("Acos", 7, floatUnary<AcosOp>);
  ops.onOp("Acosh", 9, floatUnary<AcoshOp>);
  ops.onOp("Asin", 7, floatUnary<AsinOp>);
  ops.onOp("Asinh", 9, floatUnary<AsinhOp>);
  ops.onOp("Atan", 7, floatUnary<AtanOp>);
  ops.onOp("Atanh", 9, floatUnary<AtanhOp>);
  ops.onOp("Ceil", 1, floatUnary<CeilOp>);
  ops.onOp("Celu", 12, withAlpha<CeluOp>(1.0f));
  ops.onOp("Cos", 7, floatUnary<CosOp>);
  ops.onOp("Cosh", 9, floatUnary<CoshOp>);
  ops.onOp("Elu", 1, withAlpha<EluOp>(1.0f));
  ops.onOp("Erf", 9, floatUnary<ErfOp>);
  ops.onOp("Exp", 1, floatUnary<ExpOp>);
  ops.onOp("Floor", 1, floatUnary<FloorOp>);
  ops.onOp("Gelu", 20, convertGelu);
  ops.onOp("HardSigmoid", 1, convertHardSigmoid);
  ops.onOp("HardSwish", 14, floatUnary<HardSwishOp>);
  ops.onOp("IsInf", 10, convertIsInf);
  ops.onOp("IsNaN", 9, floatUnary<IsNaNOp>);
  ops.onOp("LeakyRelu", 1, withAlpha<LeakyReluOp>(0.01f));
  ops.onOp("Log", 1, floatUnary<LogOp>);
  ops.onOp("Mish", 18, convertMish);
  ops.onOp("Reciprocal", 1, floatUnary<ReciprocalOp>);
  ops.onOp("Relu", 1, floatUnary<ReluOp>);
  ops.onOp("Round", 11, floatUnary<RoundOp>);
  ops.onOp("Selu", 1, convertSelu);
  ops.onOp("Sigmoid", 1, floatUnary<SigmoidOp>);
  ops.onOp("Sin", 7, floatUnary<SinOp>);
  ops.onOp("Sinh", 9, floatUnary<SinhOp>);
  ops.onOp("Softplus", 1, floatUnary<SoftplusOp>);
  ops.onOp("Softsign", 1, floatUnary<SoftsignOp>);
  ops.onOp("Sqrt", 1, floatUnary<SqrtOp>);
  ops.onOp("Tan", 7, floatUnary<TanOp>);
  ops.onOp("Tanh", 1, floatUnary<TanhOp>);
  ops.onOp("ThresholdedRelu", 10, withAlpha<ThresholdedReluOp>(1.0f));

  // Of one operand, with bounds or a type.
  ops.onOp("Cast", 1, [](NodeContext &ctx) { return convertCast(ctx, false); });
  ops.onOp("CastLike", 15, [](NodeContext &ctx) { return convertCast(ctx, true); });
  ops.onOp("Clip", 1, convertClip);
  ops.onOp("Shrink", 9, convertShrink);
  // PRelu checks its slope against static sizes.
  ops.takeSymbols({"Add",
                   "And",
                   "BitShift",
                   "BitwiseAnd",
                   "BitwiseOr",
                   "BitwiseXor",
                   "Div",
                   "Equal",
                   "Greater",
                   "GreaterOrEqual",
                   "Less",
                   "LessOrEqual",
                   "Mod",
                   "Mul",
                   "Or",
                   "Pow",
                   "Sub",
                   "Where",
                   "Xor",
                   "Max",
                   "Mean",
                   "Min",
                   "Sum",
                   "Abs",
                   "BitwiseNot",
                   "Neg",
                   "Not",
                   "Sign",
                   "Acos",
                   "Acosh",
                   "Asin",
                   "Asinh",
                   "Atan",
                   "Atanh",
                   "Ceil",
                   "Celu",
                   "Cos",
                   "Cosh",
                   "Elu",
                   "Erf",
                   "Exp",
                   "Floor",
                   "Gelu",
                   "HardSigmoid",
                   "HardSwish",
                   "IsInf",
                   "IsNaN",
                   "LeakyRelu",
                   "Log",
                   "Mish",
                   "Reciprocal",
                   "Relu",
                   "Round",
                   "Selu",
                   "Sigmoid",
                   "Sin",
                   "Sinh",
                   "Softplus",
                   "Softsign",
                   "Sqrt",
                   "Tan",
                   "Tanh",
                   "ThresholdedRelu",
                   "Cast",
                   "CastLike",
                   "Clip",
                   "Shrink"});
}

} // namespace kiln
