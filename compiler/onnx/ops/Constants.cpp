// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Constants.cpp - Constant, ConstantOfShape, Shape, Identity, Dropout ===//
//
// These operators produce no kiln op of their own: they become constants or
// forward their input.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
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

/// The constant input 0 of an operator whose result size depends on its
/// values, computed when compiling; null after an error (not a constant,
/// or too large to compute with here).
DenseElementsAttr knownInput(NodeContext &ctx) {
  constexpr int64_t kMaxElements = int64_t(1) << 22;
  // Counted before the values are read: a large initializer is a blob,
  // which reading copies.
  if (ctx.hasInput(0) && ctx.inputType(0).getNumElements() > kMaxElements) {
    ctx.error() << "the input has " << ctx.inputType(0).getNumElements()
                << " elements; kiln computes " << ctx.node().op_type()
                << " when compiling for up to " << kMaxElements;
    return {};
  }
  return ctx.constantTensor(0, "the input");
}

LogicalResult convertConstant(NodeContext &ctx) {
  Builder &b = ctx.builder();
  for (onnx::AttributeProto &attr : *ctx.mutableNode().mutable_attribute()) {
    const std::string &name = attr.name();
    if (name == "value") {
      llvm::Expected<ElementsAttr> value =
          tensorToAttr(*b.getContext(), *attr.mutable_t(), ctx.modelDir());
      if (!value)
        return ctx.error() << llvm::toString(value.takeError());
      return emitConstant(ctx, *value);
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
  std::optional<Dims> dims = ctx.sizeInts(0, "the shape");
  if (!dims)
    return failure();
  SmallVector<int64_t> shape = staticSizes(*dims);
  bool symbolic = llvm::is_contained(shape, ShapedType::kDynamic);
  if (!symbolic && !elementCount(shape))
    return ctx.error() << "the shape has a negative dimension or too many elements";
  Builder &b = ctx.builder();
  // The fill value is a one-element tensor; the default is float 0.
  Attribute fill = b.getF32FloatAttr(0.0f);
  if (onnx::AttributeProto *attr = const_cast<onnx::AttributeProto *>(ctx.attribute("value"))) {
    llvm::Expected<ElementsAttr> converted =
        tensorToAttr(*b.getContext(), *attr->mutable_t(), ctx.modelDir());
    if (!converted)
      return ctx.error() << llvm::toString(converted.takeError());
    auto value = dyn_cast<DenseElementsAttr>(*converted);
    if (!value || value.getNumElements() != 1)
      return ctx.error() << "'value' must hold one element";
    fill = *value.value_begin<Attribute>();
  }
  Type element = cast<TypedAttr>(fill).getType();
  // A symbolic shape: the one value expanded to it.
  if (symbolic)
    return ctx.emit<ExpandOp>(
        {ctx.constant(DenseElementsAttr::get(RankedTensorType::get({}, element), fill))},
        ctx.targetAttrs(*dims));
  auto type = RankedTensorType::get(shape, element);
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
  auto type = RankedTensorType::get({int64_t(window.size())}, b.getI64Type());
  // A symbolic dimension makes it a kiln.dims value, which folds on.
  if (isSymbolic(ctx.inputType(0))) {
    Dims all = dimsOf(ctx.inputType(0));
    Dims sizes(all.begin() + start, all.begin() + end);
    ctx.setOutput(0, DimsOp::create(ctx.builder(), ctx.loc(), type,
                                    DimsAttr::get(b.getContext(), dimsMap(b.getContext(), sizes))));
    return success();
  }
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

/// The most elements Range and EyeLike fold into a constant: enough for
/// position ids and masks, too few for a hostile model to exhaust memory.
constexpr int64_t kMaxGeneratedElements = int64_t(1) << 20;

/// A Range whose start or limit is symbolic (position ids from a sequence
/// length, past + 0 .. past + sequence): with delta 1, the constant range
/// up to the limit's largest value, sliced from start to limit.
LogicalResult convertSymbolicRange(NodeContext &ctx, AffineExpr start, AffineExpr limit) {
  std::optional<double> delta = ctx.constantScalar(2, "the delta");
  if (!delta)
    return failure();
  if (*delta != 1)
    return ctx.error() << "a range with a symbolic start or limit takes delta 1, not " << *delta;
  std::optional<int64_t> most = ctx.largestValue(limit);
  if (!most || *most > kMaxGeneratedElements)
    return ctx.error() << "a range with a symbolic limit is supported up to "
                       << kMaxGeneratedElements << " elements, at the symbols' largest values";
  Type element = ctx.inputType(0).getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < *most; ++i)
    values.push_back(elementAttr(element, double(i)));
  Value all = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({*most}, element), values));
  MLIRContext *context = element.getContext();
  Builder &b = ctx.builder();
  return ctx.emit<SliceOp>(
      {all}, {ctx.named("starts", b.getDenseI64ArrayAttr(staticSizes(start))),
              ctx.named("ends", b.getDenseI64ArrayAttr(staticSizes(limit))),
              ctx.named("steps", b.getDenseI64ArrayAttr({1})),
              ctx.named("bounds", DimsAttr::get(context, dimsMap(context, {start, limit})))});
}

LogicalResult convertRange(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  if (ctx.input(0).getDefiningOp<DimsOp>() || ctx.input(1).getDefiningOp<DimsOp>()) {
    std::optional<Dims> start = ctx.sizeInts(0, "the start");
    std::optional<Dims> limit = start ? ctx.sizeInts(1, "the limit") : std::nullopt;
    if (!limit)
      return failure();
    if (start->size() != 1 || limit->size() != 1)
      return ctx.error() << "start and limit must be scalars";
    return convertSymbolicRange(ctx, start->front(), limit->front());
  }
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
  DenseElementsAttr input = knownInput(ctx);
  if (!input)
    return failure();
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

/// Unique's result size depends on its input's values too: computed when
/// compiling, from a constant input. Slices along `axis` (elements without
/// one) compare element by element; `sorted` orders them ascending, else
/// they keep the order they first appear in.
LogicalResult convertUnique(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  DenseElementsAttr input = knownInput(ctx);
  if (!input)
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t axis = 0;
  if (ctx.attribute("axis")) {
    std::optional<int64_t> given = ctx.axisAttr(0, type.getRank());
    if (!given)
      return failure();
    axis = *given;
  } else {
    shape = {type.getNumElements()};
  }
  int64_t outer = 1, inner = 1, extent = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  auto values = llvm::to_vector(input.getValues<Attribute>());
  auto element = [&](int64_t slice, int64_t k) { // k-th element of a slice
    return values[(k / inner * extent + slice) * inner + k % inner];
  };
  bool isUnsigned = type.getElementType().isUnsignedInteger();
  auto less = [&](Attribute a, Attribute b) {
    if (auto fa = dyn_cast<FloatAttr>(a))
      return fa.getValue() < cast<FloatAttr>(b).getValue();
    const APInt &ia = cast<IntegerAttr>(a).getValue(), &ib = cast<IntegerAttr>(b).getValue();
    return isUnsigned ? ia.ult(ib) : ia.slt(ib);
  };
  // -1, 0 or 1 as slice a orders before, with or after slice b.
  auto order = [&](int64_t a, int64_t b) {
    for (int64_t k = 0; k < outer * inner; ++k) {
      if (less(element(a, k), element(b, k)))
        return -1;
      if (less(element(b, k), element(a, k)))
        return 1;
    }
    return 0;
  };
  // Distinct slices in order of first appearance, and each slice's.
  SmallVector<int64_t> firsts, which(extent);
  for (int64_t slice = 0; slice < extent; ++slice) {
    auto same = llvm::find_if(firsts, [&](int64_t first) { return order(first, slice) == 0; });
    which[slice] = same - firsts.begin();
    if (same == firsts.end())
      firsts.push_back(slice);
  }
  SmallVector<int64_t> rank = llvm::to_vector(llvm::seq<int64_t>(0, firsts.size()));
  if (ctx.intAttr("sorted", 1) != 0)
    llvm::stable_sort(rank, [&](int64_t a, int64_t b) { return order(firsts[a], firsts[b]) < 0; });
  SmallVector<int64_t> position(firsts.size()), indices, inverse, counts(firsts.size(), 0);
  for (auto [at, distinct] : llvm::enumerate(rank))
    position[distinct] = at;
  for (int64_t distinct : rank)
    indices.push_back(firsts[distinct]);
  for (int64_t slice = 0; slice < extent; ++slice) {
    inverse.push_back(position[which[slice]]);
    ++counts[position[which[slice]]];
  }
  int64_t found = firsts.size();
  SmallVector<int64_t> resultShape = shape;
  resultShape[axis] = found;
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t slice : indices)
      for (int64_t i = 0; i < inner; ++i)
        result.push_back(element(slice, o * inner + i));
  Type i64 = ctx.builder().getI64Type();
  auto vector = [&](ArrayRef<int64_t> data) {
    return ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get({int64_t(data.size())}, i64), data));
  };
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type.clone(resultShape), result)));
  ctx.setOutput(1, vector(indices));
  ctx.setOutput(2, vector(inverse));
  ctx.setOutput(3, vector(counts));
  return success();
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

} // namespace

void registerConstantOperators(OperatorTable &ops) {
  ops.onOp("Constant", 1, convertConstant);
  ops.onOp("ConstantOfShape", 9, convertConstantOfShape);
  ops.onOp("Dropout", 1, convertDropout);
  ops.onOp("EyeLike", 9, convertEyeLike);
  ops.onOp("Identity", 1, convertIdentity);
  ops.onOp("NonZero", 9, convertNonZero);
  ops.onOp("Range", 11, convertRange);
  ops.onOp("Shape", 1, convertShape);
  ops.onOp("Size", 1, convertSize);
  ops.onOp("Unique", 11, convertUnique);
  ops.takeSymbols({"Constant", "ConstantOfShape", "Dropout", "Identity", "Range", "Shape"});
}

} // namespace kiln
