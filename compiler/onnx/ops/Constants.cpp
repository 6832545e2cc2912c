//===- Constants.cpp - Constant, ConstantOfShape, Shape, Identity, Dropout ===//
//
// These operators produce no kiln op of their own: they become constants or
// forward their input.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Tensors.h"
#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

namespace {

LogicalResult emitConstant(NodeContext &ctx, ElementsAttr value) {
  ctx.setOutput(0, ConstantOp::create(ctx.builder(), ctx.loc(), value.getType(), value));
  return success();
}

} // namespace

LogicalResult convertConstant(NodeContext &ctx) {
  Builder &b = ctx.builder();
  for (onnx::AttributeProto &attr : *ctx.mutableNode().mutable_attribute()) {
    const std::string &name = attr.name();
    if (name == "value") {
      std::string reason;
      ElementsAttr value = tensorToAttr(*b.getContext(), *attr.mutable_t(), ctx.modelDir(), reason);
      if (!value)
        return ctx.error() << reason;
      return emitConstant(ctx, value);
    }
    if (name == "value_float")
      return emitConstant(
          ctx, DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()), attr.f()));
    if (name == "value_int")
      return emitConstant(
          ctx, DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()), attr.i()));
    if (name == "value_floats") {
      SmallVector<float> values(attr.floats().begin(), attr.floats().end());
      return emitConstant(ctx, DenseElementsAttr::get(
                                   RankedTensorType::get({int64_t(values.size())}, b.getF32Type()),
                                   ArrayRef<float>(values)));
    }
    if (name == "value_ints") {
      SmallVector<int64_t> values(attr.ints().begin(), attr.ints().end());
      return emitConstant(ctx, DenseElementsAttr::get(
                                   RankedTensorType::get({int64_t(values.size())}, b.getI64Type()),
                                   ArrayRef<int64_t>(values)));
    }
    return ctx.error() << "constant attribute '" << name << "' is not supported";
  }
  return ctx.error() << "the constant has no value";
}

LogicalResult convertConstantOfShape(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  auto shape = ctx.constantInts(0, "the shape");
  if (!shape)
    return failure();
  if (!elementCount(*shape))
    return ctx.error() << "the shape has a negative dimension or too many elements";
  Builder &b = ctx.builder();
  // The fill value is a one-element tensor; the default is float 0.
  Attribute fill = b.getF32FloatAttr(0.0f);
  if (onnx::AttributeProto *attr = const_cast<onnx::AttributeProto *>(ctx.attribute("value"))) {
    std::string reason;
    auto value = dyn_cast_or_null<DenseElementsAttr>(
        tensorToAttr(*b.getContext(), *attr->mutable_t(), ctx.modelDir(), reason));
    if (!value || value.getNumElements() != 1)
      return ctx.error() << (reason.empty() ? "'value' must hold one element" : reason);
    fill = *value.value_begin<Attribute>();
  }
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(fill).getType());
  return emitConstant(ctx, DenseElementsAttr::get(type, fill));
}

LogicalResult convertShape(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  // Shapes are static, so Shape is always a constant. From opset 15 it may
  // take a [start, end) window of the dimensions, clamped like Slice.
  ArrayRef<int64_t> dims = ctx.inputType(0).getShape();
  int64_t rank = dims.size();
  int64_t start = ctx.intAttr("start", 0), end = ctx.intAttr("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  SmallVector<int64_t> window(dims.begin() + start, dims.begin() + end);
  Builder &b = ctx.builder();
  return emitConstant(
      ctx, DenseElementsAttr::get(RankedTensorType::get({int64_t(window.size())}, b.getI64Type()),
                                  ArrayRef<int64_t>(window)));
}

LogicalResult convertSize(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  // The element count of a static shape (the verifier checked it fits).
  int64_t count = *elementCount(ctx.inputType(0).getShape());
  return emitConstant(
      ctx, DenseElementsAttr::get(RankedTensorType::get({}, ctx.builder().getI64Type()), count));
}

LogicalResult convertIdentity(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  ctx.setOutput(0, ctx.input(0));
  return success();
}

LogicalResult convertDropout(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  // Inference: the data passes through. A training_mode input (opset 12)
  // must be a constant false.
  if (ctx.hasInput(2)) {
    std::optional<double> training = ctx.constantScalar(2, "training_mode");
    if (!training)
      return failure();
    if (*training != 0)
      return ctx.error() << "training_mode is true; kiln compiles inference";
  }
  ctx.setOutput(0, ctx.input(0));
  if (ctx.isOutputUsed(1)) {
    auto type = ctx.inputType(0).clone(ctx.builder().getI1Type());
    ctx.setOutput(
        1, ConstantOp::create(ctx.builder(), ctx.loc(), type, DenseElementsAttr::get(type, true)));
  }
  return success();
}

} // namespace kiln
