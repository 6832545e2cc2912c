//===- Elementwise.cpp - elementwise ONNX operators -----------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Tensors.h"

#include <limits>

using namespace mlir;

namespace kiln {

LogicalResult convertElementwise(NodeContext &ctx) {
  llvm::StringRef op = ctx.node().op_type();
  Builder &b = ctx.builder();

  if (op == "Where") {
    if (failed(ctx.requireInputs(3)))
      return failure();
    return ctx.emit<WhereOp>({ctx.input(0), ctx.input(1), ctx.input(2)});
  }

  bool binary = llvm::is_contained({"Add", "Sub", "Mul", "Div", "Pow", "Equal"}, op);
  if (failed(ctx.requireInputs(binary ? 2 : 1)))
    return failure();
  Value x = ctx.input(0);
  if (op == "Pow" && failed(ctx.requireFloat(0)))
    return failure();
  if (binary) {
    Value y = ctx.input(1);
    if (op == "Add")
      return ctx.emit<AddOp>({x, y});
    if (op == "Sub")
      return ctx.emit<SubOp>({x, y});
    if (op == "Mul")
      return ctx.emit<MulOp>({x, y});
    if (op == "Div")
      return ctx.emit<DivOp>({x, y});
    if (op == "Pow")
      return ctx.emit<PowOp>({x, y});
    return ctx.emit<EqualOp>({x, y});
  }

  // The unary operators compute on floats only.
  if (failed(ctx.requireFloat(0)))
    return failure();
  if (op == "Sqrt")
    return ctx.emit<SqrtOp>({x});
  if (op == "Exp")
    return ctx.emit<ExpOp>({x});
  if (op == "Erf")
    return ctx.emit<ErfOp>({x});
  if (op == "Tanh")
    return ctx.emit<TanhOp>({x});
  if (op == "Sigmoid")
    return ctx.emit<SigmoidOp>({x});
  if (op == "Relu")
    return ctx.emit<ReluOp>({x});
  if (op == "HardSwish")
    return ctx.emit<HardSwishOp>({x});
  if (op == "Gelu") {
    std::string approximate = ctx.stringAttr("approximate", "none");
    if (approximate != "none")
      return ctx.error() << "approximate='" << approximate
                         << "' is not supported (only the exact form, 'none')";
    return ctx.emit<GeluOp>({x});
  }
  if (op == "LeakyRelu")
    return ctx.emit<LeakyReluOp>(
        {x}, {ctx.named("alpha", b.getF32FloatAttr(ctx.floatAttr("alpha", 0.01f)))});
  assert(op == "HardSigmoid" && "an elementwise operator without a converter");
  return ctx.emit<HardSigmoidOp>(
      {x}, {ctx.named("alpha", b.getF32FloatAttr(ctx.floatAttr("alpha", 0.2f))),
            ctx.named("beta", b.getF32FloatAttr(ctx.floatAttr("beta", 0.5f)))});
}

LogicalResult convertClip(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  // From opset 11 the bounds are optional inputs; an absent one is unbounded.
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  if (ctx.hasInput(1)) {
    std::optional<double> value = ctx.constantScalar(1, "the minimum");
    if (!value)
      return failure();
    low = *value;
  }
  if (ctx.hasInput(2)) {
    std::optional<double> value = ctx.constantScalar(2, "the maximum");
    if (!value)
      return failure();
    high = *value;
  }
  Builder &b = ctx.builder();
  return ctx.emit<ClipOp>({ctx.input(0)}, {ctx.named("min", b.getF64FloatAttr(low)),
                                           ctx.named("max", b.getF64FloatAttr(high))});
}

LogicalResult convertCast(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  const onnx::AttributeProto *to = ctx.attribute("to");
  if (!to)
    return ctx.error() << "attribute 'to' is missing";
  Type element = elementTypeOf(*ctx.builder().getContext(), int32_t(to->i()));
  if (!element)
    return ctx.error() << "cannot cast to " << onnxTypeName(int32_t(to->i()))
                       << ", which kiln does not support";
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
