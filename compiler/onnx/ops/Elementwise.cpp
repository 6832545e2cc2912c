//===- Elementwise.cpp - elementwise ONNX operators -----------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Tensors.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;

namespace kiln {

namespace {

/// Builds `OpT` on the node's first input.
template <typename OpT> LogicalResult emitUnary(NodeContext &ctx) {
  return ctx.emit<OpT>({ctx.input(0)});
}

/// Builds `OpT` on the node's first two inputs.
template <typename OpT> LogicalResult emitBinary(NodeContext &ctx) {
  return ctx.emit<OpT>({ctx.input(0), ctx.input(1)});
}

using Emitter = LogicalResult (*)(NodeContext &);

/// The operators of two operands that are one kiln op each, without
/// attributes.
const llvm::StringMap<Emitter> &plainBinaries() {
  static const llvm::StringMap<Emitter> binaries = {
      {"Add", emitBinary<AddOp>},
      {"And", emitBinary<AndOp>},
      {"BitwiseAnd", emitBinary<AndOp>},
      {"BitwiseOr", emitBinary<OrOp>},
      {"BitwiseXor", emitBinary<XorOp>},
      {"Div", emitBinary<DivOp>},
      {"Equal", emitBinary<EqualOp>},
      {"Greater", emitBinary<GreaterOp>},
      {"GreaterOrEqual", emitBinary<GreaterOrEqualOp>},
      {"Less", emitBinary<LessOp>},
      {"LessOrEqual", emitBinary<LessOrEqualOp>},
      {"Mul", emitBinary<MulOp>},
      {"Or", emitBinary<OrOp>},
      {"Pow", emitBinary<PowOp>},
      {"Sub", emitBinary<SubOp>},
      {"Xor", emitBinary<XorOp>},
  };
  return binaries;
}

/// The operators of one float operand, each one kiln op.
const llvm::StringMap<Emitter> &floatFunctions() {
  static const llvm::StringMap<Emitter> functions = {
      {"Acos", emitUnary<AcosOp>},         {"Erf", emitUnary<ErfOp>},
      {"Exp", emitUnary<ExpOp>},           {"HardSwish", emitUnary<HardSwishOp>},
      {"Relu", emitUnary<ReluOp>},         {"Sigmoid", emitUnary<SigmoidOp>},
      {"Sqrt", emitUnary<SqrtOp>},         {"Tanh", emitUnary<TanhOp>},
      {"Acosh", emitUnary<AcoshOp>},       {"Asin", emitUnary<AsinOp>},
      {"Asinh", emitUnary<AsinhOp>},       {"Atan", emitUnary<AtanOp>},
      {"Atanh", emitUnary<AtanhOp>},       {"Ceil", emitUnary<CeilOp>},
      {"Cos", emitUnary<CosOp>},           {"Cosh", emitUnary<CoshOp>},
      {"Floor", emitUnary<FloorOp>},       {"IsNaN", emitUnary<IsNaNOp>},
      {"Log", emitUnary<LogOp>},           {"Reciprocal", emitUnary<ReciprocalOp>},
      {"Round", emitUnary<RoundOp>},       {"Sin", emitUnary<SinOp>},
      {"Sinh", emitUnary<SinhOp>},         {"Softplus", emitUnary<SoftplusOp>},
      {"Softsign", emitUnary<SoftsignOp>}, {"Tan", emitUnary<TanOp>},
  };
  return functions;
}

} // namespace

LogicalResult convertElementwise(NodeContext &ctx) {
  llvm::StringRef op = ctx.node().op_type();
  Builder &b = ctx.builder();

  if (op == "Where") {
    if (failed(ctx.requireInputs(3)))
      return failure();
    return ctx.emit<WhereOp>({ctx.input(0), ctx.input(1), ctx.input(2)});
  }

  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0);
  if (op == "PRelu" && failed(ctx.requireFloat(0)))
    return failure();
  if (auto plain = plainBinaries().find(op); plain != plainBinaries().end())
    return plain->second(ctx);
  if (op == "Mod") {
    bool fmod = ctx.intAttr("fmod", 0) != 0;
    if (!fmod && isa<FloatType>(ctx.inputType(0).getElementType()))
      return ctx.error()
             << "Mod of floats needs fmod = 1 (ONNX defines fmod = 0 for integers only)";
    return ctx.emit<ModOp>({x, ctx.input(1)}, {ctx.named("fmod", b.getBoolAttr(fmod))});
  }
  if (op == "BitShift") {
    std::string direction = ctx.stringAttr("direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      return ctx.error() << "direction '" << direction << "' is neither LEFT nor RIGHT";
    if (!ctx.inputType(0).getElementType().isUnsignedInteger())
      return ctx.error() << "the operator on " << ctx.inputType(0).getElementType()
                         << " tensors is not supported; ONNX defines it on unsigned integers";
    return ctx.emit<BitShiftOp>({x, ctx.input(1)},
                                {ctx.named("left", b.getBoolAttr(direction == "LEFT"))});
  }
  assert(op == "PRelu" && "an elementwise operator without a converter");
  // The slope broadcasts to X, never X to the slope.
  auto shape = broadcastShapes(ctx.inputType(0).getShape(), ctx.inputType(1).getShape());
  if (shape && *shape != ctx.inputType(0).getShape())
    return ctx.error() << "the slope's shape " << ctx.inputType(1)
                       << " does not broadcast to the input's " << ctx.inputType(0);
  return emitBinary<PReluOp>(ctx);
}

LogicalResult convertMath(NodeContext &ctx) {
  llvm::StringRef op = ctx.node().op_type();
  Builder &b = ctx.builder();
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (op == "Abs")
    return emitUnary<AbsOp>(ctx);
  if (op == "Neg")
    return emitUnary<NegOp>(ctx);
  if (op == "Sign")
    return emitUnary<SignOp>(ctx);
  if (op == "Not" || op == "BitwiseNot")
    return emitUnary<NotOp>(ctx);
  if (failed(ctx.requireFloat(0)))
    return failure();
  auto function = floatFunctions().find(op);
  if (function != floatFunctions().end())
    return function->second(ctx);
  auto alpha = [&](float otherwise) {
    return ctx.named("alpha", b.getF32FloatAttr(ctx.floatAttr("alpha", otherwise)));
  };
  if (op == "Gelu") {
    std::string approximate = ctx.stringAttr("approximate", "none");
    if (approximate != "none")
      return ctx.error() << "approximate='" << approximate
                         << "' is not supported (only the exact form, 'none')";
    return emitUnary<GeluOp>(ctx);
  }
  if (op == "LeakyRelu")
    return ctx.emit<LeakyReluOp>({ctx.input(0)}, {alpha(0.01f)});
  if (op == "HardSigmoid")
    return ctx.emit<HardSigmoidOp>(
        {ctx.input(0)},
        {alpha(0.2f), ctx.named("beta", b.getF32FloatAttr(ctx.floatAttr("beta", 0.5f)))});
  if (op == "Elu")
    return ctx.emit<EluOp>({ctx.input(0)}, {alpha(1.0f)});
  if (op == "Celu")
    return ctx.emit<CeluOp>({ctx.input(0)}, {alpha(1.0f)});
  if (op == "ThresholdedRelu")
    return ctx.emit<ThresholdedReluOp>({ctx.input(0)}, {alpha(1.0f)});
  if (op == "Selu")
    return ctx.emit<SeluOp>({ctx.input(0)},
                            {alpha(1.67326319217681884765625f),
                             ctx.named("gamma", b.getF32FloatAttr(ctx.floatAttr(
                                                    "gamma", 1.05070102214813232421875f)))});
  if (op == "IsInf")
    return ctx.emit<IsInfOp>(
        {ctx.input(0)},
        {ctx.named("detect_positive", b.getBoolAttr(ctx.intAttr("detect_positive", 1))),
         ctx.named("detect_negative", b.getBoolAttr(ctx.intAttr("detect_negative", 1)))});
  assert(op == "Mish" && "a math operator without a converter");
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

LogicalResult convertVariadic(NodeContext &ctx) {
  llvm::StringRef op = ctx.node().op_type();
  if (ctx.node().input_size() < 1)
    return ctx.error() << op << " needs at least one input";
  if (failed(ctx.requireInputs(ctx.node().input_size())))
    return failure();
  Value result = ctx.input(0);
  for (int i = 1; i < ctx.node().input_size(); ++i) {
    std::optional<SmallVector<Value>> next;
    if (op == "Min")
      next = ctx.create<MinOp>({result, ctx.input(i)});
    else if (op == "Max")
      next = ctx.create<MaxOp>({result, ctx.input(i)});
    else
      next = ctx.create<AddOp>({result, ctx.input(i)});
    if (!next)
      return failure();
    result = next->front();
  }
  if (op == "Mean") {
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

LogicalResult convertCast(NodeContext &ctx) {
  // CastLike takes the element type of its second input.
  bool like = ctx.node().op_type() == "CastLike";
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

} // namespace kiln
