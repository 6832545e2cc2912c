//===- Constants.cpp - Constant, ConstantOfShape, Shape, Identity, Dropout ===//
//
// These operators produce no kiln op of their own: they become constants or
// forward their input.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Tensors.h"
#include "dialects/kiln/Shapes.h"

#include <cmath>

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

namespace {

/// The most elements Range and EyeLike fold into a constant: enough for
/// position ids and masks, too few for a hostile model to exhaust memory.
constexpr int64_t kMaxGeneratedElements = int64_t(1) << 20;

} // namespace

LogicalResult convertRange(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  std::optional<double> start = ctx.constantScalar(0, "the start");
  std::optional<double> limit = start ? ctx.constantScalar(1, "the limit") : std::nullopt;
  std::optional<double> delta = limit ? ctx.constantScalar(2, "the delta") : std::nullopt;
  if (!delta)
    return failure();
  if (*delta == 0 || !std::isfinite(*start) || !std::isfinite(*limit) || !std::isfinite(*delta))
    return ctx.error() << "start, limit and delta must be finite and delta non-zero";
  double count = std::max(std::ceil((*limit - *start) / *delta), 0.0);
  if (count > double(kMaxGeneratedElements))
    return ctx.error() << "a range of " << count << " elements is not supported (at most "
                       << kMaxGeneratedElements << ")";
  Type element = ctx.inputType(0).getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < int64_t(count); ++i)
    values.push_back(elementAttr(element, *start + double(i) * *delta));
  return emitConstant(
      ctx, DenseElementsAttr::get(RankedTensorType::get({int64_t(count)}, element), values));
}

LogicalResult convertEyeLike(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType input = ctx.inputType(0);
  if (input.getRank() != 2)
    return ctx.error() << "expects a 2-D input, got " << input;
  Type element = input.getElementType();
  if (const onnx::AttributeProto *dtype = ctx.attribute("dtype")) {
    element = elementTypeOf(*ctx.builder().getContext(), int32_t(dtype->i()));
    if (!element)
      return ctx.error() << "dtype " << onnxTypeName(int32_t(dtype->i())) << " is not supported";
  }
  int64_t rows = input.getDimSize(0), columns = input.getDimSize(1);
  if (*elementCount(input.getShape()) > kMaxGeneratedElements)
    return ctx.error() << "an EyeLike of " << rows << "x" << columns
                       << " is not supported (at most " << kMaxGeneratedElements << " elements)";
  // Ones on the k-th diagonal: column - row == k.
  int64_t k = ctx.intAttr("k", 0);
  SmallVector<Attribute> values;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t column = 0; column < columns; ++column)
      values.push_back(elementAttr(element, column - row == k ? 1.0 : 0.0));
  return emitConstant(ctx, DenseElementsAttr::get(input.clone(element), values));
}

/// NonZero's result size depends on its input's values: kiln computes it
/// when compiling, from a constant input.
LogicalResult convertNonZero(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  DenseElementsAttr input = ctx.constantTensor(0, "the input");
  if (!input)
    return failure();
  constexpr int64_t kMaxElements = int64_t(1) << 22;
  if (input.getNumElements() > kMaxElements)
    return ctx.error() << "the input has " << input.getNumElements()
                       << " elements; kiln computes NonZero when compiling for up to "
                       << kMaxElements;
  ArrayRef<int64_t> shape = input.getType().getShape();
  SmallVector<int64_t> found;
  int64_t position = 0;
  for (Attribute value : input.getValues<Attribute>()) {
    bool nonZero = isa<FloatAttr>(value) ? !cast<FloatAttr>(value).getValue().isZero()
                                         : !cast<IntegerAttr>(value).getValue().isZero();
    if (nonZero)
      found.push_back(position);
    ++position;
  }
  // [rank, count]: row d holds each non-zero element's coordinate d.
  int64_t rank = shape.size(), count = found.size();
  SmallVector<int64_t> coordinates(rank * count);
  for (int64_t n = 0; n < count; ++n)
    for (int64_t d = rank - 1, rest = found[n]; d >= 0; --d) {
      coordinates[d * count + n] = rest % shape[d];
      rest /= shape[d];
    }
  auto type = RankedTensorType::get({rank, count}, ctx.builder().getI64Type());
  return emitConstant(ctx, DenseElementsAttr::get(type, ArrayRef<int64_t>(coordinates)));
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
  // must be a constant false, or the ratio a constant 0 (which drops
  // nothing even in training).
  if (ctx.hasInput(2)) {
    std::optional<double> training = ctx.constantScalar(2, "training_mode");
    if (!training)
      return failure();
    std::optional<double> ratio = 0.5;
    if (*training != 0 && ctx.hasInput(1) && !(ratio = ctx.constantScalar(1, "ratio")))
      return failure();
    if (*training != 0 && *ratio != 0)
      return ctx.error() << "training_mode true with a ratio of " << *ratio
                         << " is not supported; kiln compiles inference";
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
