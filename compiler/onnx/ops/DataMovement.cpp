//===- DataMovement.cpp - reshapes, transposes, concat, split, slice, ... -===//

#include "compiler/onnx/NodeContext.h"
#include "dialects/kiln/Shapes.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kiln {

namespace {

LogicalResult emitReshape(NodeContext &ctx, ArrayRef<int64_t> shape) {
  return ctx.emit<ReshapeOp>({ctx.input(0)},
                             {ctx.named("shape", ctx.builder().getDenseI64ArrayAttr(shape))});
}

/// Axes from Squeeze/Unsqueeze: an attribute before opset 13, an input after.
std::optional<SmallVector<int64_t>> squeezeAxes(NodeContext &ctx) {
  if (ctx.opset() < 13)
    return ctx.intsAttr("axes").value_or(SmallVector<int64_t>());
  if (!ctx.hasInput(1))
    return SmallVector<int64_t>();
  return ctx.constantInts(1, "axes");
}

/// Normalizes, sorts and checks axes against `rank`.
std::optional<SmallVector<int64_t>> normalizeAxes(NodeContext &ctx, ArrayRef<int64_t> axes,
                                                  int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized) {
      ctx.error() << "axis " << axis << " is out of range for rank " << rank;
      return std::nullopt;
    }
    result.push_back(*normalized);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end()) {
    ctx.error() << "axes repeat a dimension";
    return std::nullopt;
  }
  return result;
}

} // namespace

LogicalResult convertReshape(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  auto requested = ctx.constantInts(1, "the shape");
  if (!requested)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  bool allowZero = ctx.intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> shape = *requested;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t &dim = shape[i];
    if (dim == 0 && !allowZero) {
      // 0 copies the input's dimension.
      if (int64_t(i) >= type.getRank())
        return ctx.error() << "shape entry " << i << " is 0 (copy), but the input has rank "
                           << type.getRank();
      dim = type.getDimSize(i);
    }
    if (dim == -1) {
      if (inferred >= 0)
        return ctx.error() << "the shape has more than one -1";
      inferred = int(i);
      continue;
    }
    if (dim < 0 || llvm::MulOverflow(known, dim, known))
      return ctx.error() << "shape entry " << i << " (" << dim << ") is invalid";
  }
  if (inferred >= 0) {
    if (known == 0 || type.getNumElements() % known != 0)
      return ctx.error() << "cannot infer the -1 in the shape: " << type.getNumElements()
                         << " elements do not divide by " << known;
    shape[inferred] = type.getNumElements() / known;
  }
  return emitReshape(ctx, shape);
}

LogicalResult convertFlatten(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank(), axis = ctx.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.error() << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  auto rows = elementCount(type.getShape().take_front(axis));
  auto columns = elementCount(type.getShape().drop_front(axis));
  if (!rows || !columns)
    return ctx.error() << "the flattened shape has too many elements";
  return emitReshape(ctx, {*rows, *columns});
}

LogicalResult convertSqueeze(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  auto requested = squeezeAxes(ctx);
  if (!requested)
    return failure();
  auto axes = normalizeAxes(ctx, *requested, type.getRank());
  if (!axes)
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool listed = llvm::is_contained(*axes, d);
    if (listed && type.getDimSize(d) != 1)
      return ctx.error() << "cannot squeeze dimension " << d << " of size " << type.getDimSize(d);
    // With no axes, every dimension of size 1 goes.
    if (!(listed || (axes->empty() && type.getDimSize(d) == 1)))
      shape.push_back(type.getDimSize(d));
  }
  return emitReshape(ctx, shape);
}

LogicalResult convertUnsqueeze(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  auto requested = squeezeAxes(ctx);
  if (!requested)
    return failure();
  int64_t rank = type.getRank() + int64_t(requested->size());
  auto axes = normalizeAxes(ctx, *requested, rank);
  if (!axes)
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> remaining = type.getShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(*axes, d)) {
      shape.push_back(1);
    } else {
      shape.push_back(remaining.front());
      remaining = remaining.drop_front();
    }
  }
  return emitReshape(ctx, shape);
}

LogicalResult convertTranspose(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  // The default reverses the dimensions.
  SmallVector<int64_t> perm =
      ctx.intsAttr("perm").value_or(llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  return ctx.emit<TransposeOp>({ctx.input(0)},
                               {ctx.named("perm", ctx.builder().getDenseI64ArrayAttr(perm))});
}

LogicalResult convertConcat(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  SmallVector<Value> inputs;
  for (int i = 0; i < ctx.node().input_size(); ++i)
    if (ctx.hasInput(i))
      inputs.push_back(ctx.input(i));
  if (!ctx.attribute("axis"))
    return ctx.error() << "attribute 'axis' is missing";
  int64_t rank = ctx.inputType(0).getRank();
  std::optional<int64_t> axis = normalizeAxis(ctx.intAttr("axis", 0), rank);
  if (!axis)
    return ctx.error() << "axis " << ctx.intAttr("axis", 0) << " is out of range for rank " << rank;
  return ctx.emit<ConcatOp>(inputs, {ctx.named("axis", ctx.builder().getI64IntegerAttr(*axis))});
}

LogicalResult convertSplit(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  std::optional<int64_t> axis = normalizeAxis(ctx.intAttr("axis", 0), type.getRank());
  if (!axis)
    return ctx.error() << "axis " << ctx.intAttr("axis", 0) << " is out of range for rank "
                       << type.getRank();
  int64_t dim = type.getDimSize(*axis), parts = ctx.numOutputs();
  SmallVector<int64_t> sizes;
  if (ctx.opset() < 13) {
    sizes = ctx.intsAttr("split").value_or(SmallVector<int64_t>());
  } else if (ctx.hasInput(1)) {
    auto values = ctx.constantInts(1, "split");
    if (!values)
      return failure();
    sizes = *values;
  }
  if (sizes.empty()) {
    // Equal parts; from opset 18 the last may be smaller.
    if (ctx.opset() >= 18 && ctx.attribute("num_outputs"))
      parts = ctx.intAttr("num_outputs", parts);
    if (parts <= 0)
      return ctx.error() << "cannot split into " << parts << " parts";
    int64_t chunk = llvm::divideCeil(dim, parts);
    if (ctx.opset() < 18 && dim % parts != 0)
      return ctx.error() << "dimension " << *axis << " of size " << dim << " does not split into "
                         << parts << " equal parts";
    for (int64_t i = 0, left = dim; i < parts; ++i, left -= chunk)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  if (int64_t(sizes.size()) != ctx.numOutputs())
    return ctx.error() << "split gives " << sizes.size() << " sizes for " << ctx.numOutputs()
                       << " outputs";
  Builder &b = ctx.builder();
  auto results = ctx.create<SplitOp>({ctx.input(0)},
                                     {ctx.named("axis", b.getI64IntegerAttr(*axis)),
                                      ctx.named("sizes", b.getDenseI64ArrayAttr(sizes))},
                                     sizes.size());
  if (!results)
    return failure();
  for (auto [i, value] : llvm::enumerate(*results))
    ctx.setOutput(i, value);
  return success();
}

LogicalResult convertSlice(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  auto starts = ctx.constantInts(1, "starts");
  auto ends = starts ? ctx.constantInts(2, "ends") : std::nullopt;
  if (!ends)
    return failure();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  SmallVector<int64_t> steps(starts->size(), 1);
  if (ctx.hasInput(3)) {
    auto values = ctx.constantInts(3, "axes");
    if (!values)
      return failure();
    axes = *values;
  }
  if (ctx.hasInput(4)) {
    auto values = ctx.constantInts(4, "steps");
    if (!values)
      return failure();
    steps = *values;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return ctx.error() << "starts, ends, axes and steps differ in length";

  SmallVector<int64_t> outStarts(rank, 0), outEnds(type.getShape()), outSteps(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
    if (!axis || seen[*axis])
      return ctx.error() << "axis " << axes[i] << " is out of range or repeated";
    seen[*axis] = true;
    int64_t dim = type.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return ctx.error() << "steps must not be 0";
    // Negative bounds count from the end; then clamp into the dimension
    // (for a negative step, an end of -1 means "through element 0").
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::min(std::max<int64_t>(start, 0), dim - 1);
      end = std::min(std::max<int64_t>(end, -1), dim - 1);
    }
    outStarts[*axis] = start;
    outEnds[*axis] = end;
    outSteps[*axis] = step;
  }
  Builder &b = ctx.builder();
  return ctx.emit<SliceOp>({ctx.input(0)}, {ctx.named("starts", b.getDenseI64ArrayAttr(outStarts)),
                                            ctx.named("ends", b.getDenseI64ArrayAttr(outEnds)),
                                            ctx.named("steps", b.getDenseI64ArrayAttr(outSteps))});
}

LogicalResult convertGather(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  std::optional<int64_t> axis = normalizeAxis(ctx.intAttr("axis", 0), rank);
  if (!axis)
    return ctx.error() << "axis " << ctx.intAttr("axis", 0) << " is out of range for rank " << rank;
  return ctx.emit<GatherOp>({ctx.input(0), ctx.input(1)},
                            {ctx.named("axis", ctx.builder().getI64IntegerAttr(*axis))});
}

LogicalResult convertExpand(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  auto shape = ctx.constantInts(1, "the shape");
  if (!shape)
    return failure();
  return ctx.emit<ExpandOp>({ctx.input(0)},
                            {ctx.named("shape", ctx.builder().getDenseI64ArrayAttr(*shape))});
}

LogicalResult convertPad(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  std::string modeName = ctx.stringAttr("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode)
    return ctx.error() << "pad mode '" << modeName << "' is not supported";
  auto given = ctx.constantInts(1, "pads");
  if (!given)
    return failure();
  double value = 0.0;
  if (ctx.hasInput(2)) {
    std::optional<double> constant = ctx.constantScalar(2, "constant_value");
    if (!constant)
      return failure();
    value = *constant;
  }
  // From opset 18 pads may cover only some axes.
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (ctx.hasInput(3)) {
    auto values = ctx.constantInts(3, "axes");
    if (!values)
      return failure();
    axes.clear();
    for (int64_t axis : *values) {
      std::optional<int64_t> normalized = normalizeAxis(axis, rank);
      if (!normalized)
        return ctx.error() << "axis " << axis << " is out of range for rank " << rank;
      axes.push_back(*normalized);
    }
  }
  if (given->size() != 2 * axes.size())
    return ctx.error() << "expected " << 2 * axes.size() << " pads, got " << given->size();
  SmallVector<int64_t> pads(2 * rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    pads[axis] = (*given)[i];
    pads[axis + rank] = (*given)[i + axes.size()];
  }
  Builder &b = ctx.builder();
  return ctx.emit<PadOp>({ctx.input(0)},
                         {ctx.named("pads", b.getDenseI64ArrayAttr(pads)),
                          ctx.named("mode", PadModeAttr::get(b.getContext(), *mode)),
                          ctx.named("value", b.getF64FloatAttr(value))});
}

} // namespace kiln
