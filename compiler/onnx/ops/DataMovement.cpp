// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- DataMovement.cpp - reshapes, transposes, concat, split, slice, ... -===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Shapes.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kiln {

namespace {

LogicalResult emitReshape(NodeContext &ctx, ArrayRef<int64_t> shape) {
  return ctx.emit<ReshapeOp>({ctx.input(0)},
                             {ctx.named("shape", ctx.builder().getDenseI64ArrayAttr(shape))});
}

LogicalResult emitReshape(NodeContext &ctx, ArrayRef<AffineExpr> dims) {
  return ctx.emit<ReshapeOp>({ctx.input(0)}, ctx.targetAttrs(dims));
}

/// Reshape to a shape with symbolic entries, or of an input with symbolic
/// dimensions: 0 copies the input's dimension, -1 is what the others leave
/// of the input's element count (its factors cancelled against theirs).
LogicalResult convertSymbolicReshape(NodeContext &ctx, ArrayRef<AffineExpr> requested) {
  RankedTensorType type = ctx.inputType(0);
  Dims input = dimsOf(type), dims(requested);
  bool allowZero = ctx.intAttr("allowzero", 0) != 0;
  int inferred = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    std::optional<int64_t> size = constantOf(dims[i]);
    if (size == 0 && !allowZero) {
      if (int64_t(i) >= type.getRank())
        return ctx.error() << "shape entry " << i << " is 0 (copy), but the input has rank "
                           << type.getRank();
      dims[i] = input[i];
    } else if (size == -1) {
      if (inferred >= 0)
        return ctx.error() << "the shape has more than one -1";
      inferred = int(i);
    } else if (size && *size < 0) {
      return ctx.error() << "shape entry " << i << " (" << *size << ") is invalid";
    }
  }
  if (inferred >= 0) {
    Dims others(dims);
    others.erase(others.begin() + inferred);
    std::optional<AffineExpr> rest = remainingSize(type.getContext(), input, others);
    if (!rest)
      return ctx.error() << "cannot infer the -1 in the shape: " << printDims(others, {})
                         << " does not divide the input's " << printDims(input, {});
    dims[inferred] = *rest;
  }
  return emitReshape(ctx, dims);
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

LogicalResult convertReshape(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  std::optional<Dims> sizes = ctx.sizeInts(1, "the shape");
  if (!sizes)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (isSymbolic(type) || llvm::any_of(*sizes, [](AffineExpr size) { return !constantOf(size); }))
    return convertSymbolicReshape(ctx, *sizes);
  SmallVector<int64_t> requested;
  for (AffineExpr size : *sizes)
    requested.push_back(*constantOf(size));
  bool allowZero = ctx.intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> shape = requested;
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
  if (isSymbolic(type)) {
    Dims dims = dimsOf(type);
    MLIRContext *context = type.getContext();
    return emitReshape(ctx, Dims{productOf(context, ArrayRef<AffineExpr>(dims).take_front(axis)),
                                 productOf(context, ArrayRef<AffineExpr>(dims).drop_front(axis))});
  }
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
  Dims input = dimsOf(type), dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool listed = llvm::is_contained(*axes, d);
    if (listed && constantOf(input[d]) != 1)
      return ctx.error() << "cannot squeeze dimension " << d << " of size "
                         << printDim(input[d], {});
    // With no axes, every dimension of size 1 goes.
    if (!(listed || (axes->empty() && constantOf(input[d]) == 1)))
      dims.push_back(input[d]);
  }
  return emitReshape(ctx, dims);
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
  Dims input = dimsOf(type), dims;
  ArrayRef<AffineExpr> remaining = input;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(*axes, d)) {
      dims.push_back(getAffineConstantExpr(1, type.getContext()));
    } else {
      dims.push_back(remaining.front());
      remaining = remaining.drop_front();
    }
  }
  return emitReshape(ctx, dims);
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
  std::optional<int64_t> axis = ctx.axisAttr(0, rank);
  if (!axis)
    return failure();
  return ctx.emit<ConcatOp>(inputs, {ctx.named("axis", ctx.builder().getI64IntegerAttr(*axis))});
}

LogicalResult convertSplit(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  std::optional<int64_t> axis = ctx.axisAttr(0, type.getRank());
  if (!axis)
    return failure();
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

/// A Slice's kiln.slice: negative bounds count from the end, and an end
/// of 2^62 or more is the end itself. On a static axis with constant
/// bounds they are clamped into the dimension (for a negative step, an end
/// of -1 means "through element 0"). An axis whose size or a bound is
/// symbolic takes step 1 and its bounds as expressions (the op's
/// `bounds`); a symbolic end on a static dimension bounds its symbols, so
/// that no run reads past the dimension.
LogicalResult emitSlice(NodeContext &ctx, ArrayRef<AffineExpr> starts, ArrayRef<AffineExpr> ends,
                        ArrayRef<int64_t> axes, ArrayRef<int64_t> steps) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  MLIRContext *context = type.getContext();
  Dims dims = dimsOf(type);
  Dims bounds(2 * rank, getAffineConstantExpr(0, context));
  for (int64_t d = 0; d < rank; ++d)
    bounds[rank + d] = dims[d];
  SmallVector<int64_t> outSteps(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
    if (!axis || seen[*axis])
      return ctx.error() << "axis " << axes[i] << " is out of range or repeated";
    seen[*axis] = true;
    if (steps[i] == 0)
      return ctx.error() << "steps must not be 0";
    AffineExpr dim = dims[*axis];
    auto bound = [&](AffineExpr value, bool isEnd) -> AffineExpr {
      std::optional<int64_t> constant = constantOf(value);
      if (!constant)
        return value;
      if (*constant < 0)
        return dim + *constant;
      if (isEnd && *constant >= (int64_t(1) << 62))
        return dim;
      if (std::optional<int64_t> size = constantOf(dim))
        return getAffineConstantExpr(std::min(*constant, *size), context);
      return value;
    };
    AffineExpr start = bound(starts[i], false), end = bound(ends[i], true);
    bool symbolic = !constantOf(dim) || !constantOf(start) || !constantOf(end);
    if (symbolic && steps[i] != 1)
      return ctx.error() << "axis " << *axis << " has symbolic bounds or size, which take step 1, "
                         << "not " << steps[i];
    if (std::optional<int64_t> size = constantOf(dim); size && !constantOf(end))
      if (failed(ctx.requireAtMost(end, *size, "slices a dimension of " + std::to_string(*size))))
        return failure();
    if (!symbolic) {
      int64_t first = *constantOf(start), last = *constantOf(end), size = *constantOf(dim);
      if (steps[i] > 0) {
        first = std::clamp<int64_t>(first, 0, size);
        last = std::clamp<int64_t>(last, 0, size);
      } else {
        first = std::min(std::max<int64_t>(first, 0), size - 1);
        last = std::min(std::max<int64_t>(last, -1), size - 1);
      }
      start = getAffineConstantExpr(first, context);
      end = getAffineConstantExpr(last, context);
    }
    bounds[*axis] = start;
    bounds[rank + *axis] = end;
    outSteps[*axis] = steps[i];
  }
  SmallVector<int64_t> outStarts = staticSizes(ArrayRef<AffineExpr>(bounds).take_front(rank));
  SmallVector<int64_t> outEnds = staticSizes(ArrayRef<AffineExpr>(bounds).drop_front(rank));
  Builder &b = ctx.builder();
  SmallVector<NamedAttribute> attributes = {ctx.named("starts", b.getDenseI64ArrayAttr(outStarts)),
                                            ctx.named("ends", b.getDenseI64ArrayAttr(outEnds)),
                                            ctx.named("steps", b.getDenseI64ArrayAttr(outSteps))};
  AffineMap map = dimsMap(context, bounds);
  if (map.getNumSymbols() != 0)
    attributes.push_back(ctx.named("bounds", DimsAttr::get(context, map)));
  return ctx.emit<SliceOp>({ctx.input(0)}, attributes);
}

LogicalResult convertSlice(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  auto startSizes = ctx.sizeInts(1, "starts");
  auto endSizes = startSizes ? ctx.sizeInts(2, "ends") : std::nullopt;
  if (!endSizes)
    return failure();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, startSizes->size()));
  SmallVector<int64_t> steps(startSizes->size(), 1);
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
  if (endSizes->size() != startSizes->size() || axes.size() != startSizes->size() ||
      steps.size() != startSizes->size())
    return ctx.error() << "starts, ends, axes and steps differ in length";
  return emitSlice(ctx, *startSizes, *endSizes, axes, steps);
}

/// The symbolic end of the positions `indices` holds when it is a Range
/// over a symbolic limit (a constant 0, 1, 2, ... sliced to [start, end),
/// perhaps reshaped): its largest index is end - 1.
std::optional<AffineExpr> symbolicRangeEnd(Value indices) {
  while (auto reshape = indices.getDefiningOp<ReshapeOp>())
    indices = reshape.getInput();
  auto slice = indices.getDefiningOp<SliceOp>();
  if (!slice || !slice.getBoundsAttr() || slice.getType().getRank() != 1)
    return std::nullopt;
  auto positions = slice.getInput().getDefiningOp<ConstantOp>();
  auto values = positions ? dyn_cast<DenseIntElementsAttr>(positions.getValue()) : nullptr;
  if (!values || values.isSplat())
    return std::nullopt;
  for (auto [i, value] : llvm::enumerate(values.getValues<APInt>()))
    if (value.getSExtValue() != int64_t(i))
      return std::nullopt;
  return slice.getBoundsAttr().getMap().getResult(1);
}

LogicalResult convertGather(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  std::optional<int64_t> axis = ctx.axisAttr(0, rank);
  if (!axis)
    return failure();
  // Positions up to a symbolic end read a static table (GPT-2's position
  // embeddings): no size in the symbols' ranges may read past its end.
  if (std::optional<AffineExpr> end = symbolicRangeEnd(ctx.input(1));
      end && !ctx.inputType(0).isDynamicDim(*axis)) {
    int64_t rows = ctx.inputType(0).getDimSize(*axis);
    if (failed(ctx.requireAtMost(*end, rows,
                                 "gathers from " + std::to_string(rows) + " rows by position")))
      return failure();
  }
  return ctx.emit<GatherOp>({ctx.input(0), ctx.input(1)},
                            {ctx.named("axis", ctx.builder().getI64IntegerAttr(*axis))});
}

/// Compress keeps the slices whose condition is true: with the condition
/// known when compiling, a Gather of their positions.
LogicalResult convertCompress(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  DenseElementsAttr condition = ctx.constantTensor(1, "the condition");
  if (!condition)
    return failure();
  Value input = ctx.input(0);
  RankedTensorType type = ctx.inputType(0);
  int64_t axis = 0;
  if (ctx.attribute("axis")) {
    std::optional<int64_t> given = ctx.axisAttr(0, type.getRank());
    if (!given)
      return failure();
    axis = *given;
  } else {
    std::optional<int64_t> count = elementCount(type.getShape());
    input = count ? ctx.reshape(input, {*count}) : Value();
    if (!input)
      return failure();
  }
  int64_t extent = cast<RankedTensorType>(input.getType()).getDimSize(axis);
  if (condition.getType().getRank() != 1 || condition.getNumElements() > extent)
    return ctx.error() << "the condition has shape " << condition.getType()
                       << "; it must be 1-D and no longer than " << extent;
  SmallVector<int64_t> kept;
  int64_t position = 0;
  for (const APInt &flag : condition.getValues<APInt>()) {
    if (!flag.isZero())
      kept.push_back(position);
    ++position;
  }
  auto indexType = RankedTensorType::get({int64_t(kept.size())}, ctx.builder().getI64Type());
  Value indices = ctx.constant(DenseElementsAttr::get(indexType, ArrayRef<int64_t>(kept)));
  return ctx.emit<GatherOp>({input, indices},
                            {ctx.named("axis", ctx.builder().getI64IntegerAttr(axis))});
}

/// ReverseSequence reverses the first sequence_lens[b] steps of each batch
/// entry: a gather_elements along the time axis at an index computed from
/// the (run-time) lengths.
LogicalResult convertReverseSequence(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t batchAxis = ctx.intAttr("batch_axis", 1), timeAxis = ctx.intAttr("time_axis", 0);
  if (type.getRank() < 2 || batchAxis + timeAxis != 1 || batchAxis * timeAxis != 0)
    return ctx.error() << "batch_axis " << batchAxis << " and time_axis " << timeAxis
                       << " must be 0 and 1 (in either order) of an input of rank 2 or more";
  Builder &b = ctx.builder();
  Type i64 = b.getI64Type();
  int64_t steps = type.getDimSize(timeAxis), batch = type.getDimSize(batchAxis);
  if (ctx.inputType(1).getShape() != ArrayRef<int64_t>{batch})
    return ctx.error() << "sequence_lens has shape " << ctx.inputType(1) << ", not [" << batch
                       << "]";
  // Steps and lengths laid out as the input's first two dimensions.
  SmallVector<int64_t> stepShape = {steps, 1}, lengthShape = {1, batch};
  if (timeAxis == 1)
    std::swap(stepShape[0], stepShape[1]), std::swap(lengthShape[0], lengthShape[1]);
  auto iota = llvm::to_vector(llvm::seq<int64_t>(0, steps));
  Value step = ctx.constant(
      DenseElementsAttr::get(RankedTensorType::get(stepShape, i64), ArrayRef<int64_t>(iota)));
  Value lengths = ctx.reshape(ctx.castTo(ctx.input(1), i64), lengthShape);
  Value last = lengths ? ctx.make<SubOp>({lengths, ctx.scalarConstant(i64, 1)}) : Value();
  Value mirrored = last ? ctx.make<SubOp>({last, step}) : Value();
  Value inside = lengths ? ctx.make<LessOp>({step, lengths}) : Value();
  Value index = mirrored && inside ? ctx.make<WhereOp>({inside, mirrored, step}) : Value();
  SmallVector<int64_t> indexShape(type.getRank(), 1);
  indexShape[0] = type.getDimSize(0);
  indexShape[1] = type.getDimSize(1);
  index = index ? ctx.reshape(index, indexShape) : Value();
  index = index ? ctx.make<ExpandOp>({index},
                                     {ctx.named("shape", b.getDenseI64ArrayAttr(type.getShape()))})
                : Value();
  if (!index)
    return failure();
  return ctx.emit<GatherElementsOp>({ctx.input(0), index},
                                    {ctx.named("axis", b.getI64IntegerAttr(timeAxis))});
}

LogicalResult convertExpand(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  std::optional<Dims> dims = ctx.sizeInts(1, "the shape");
  if (!dims)
    return failure();
  return ctx.emit<ExpandOp>({ctx.input(0)}, ctx.targetAttrs(*dims));
}

LogicalResult convertPad(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  std::string modeName = ctx.stringAttr("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode && modeName != "wrap")
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
  if (!mode) {
    // wrap: along each padded axis a gather of positions taken modulo its
    // size, as if the tensor's ends were joined.
    Value result = ctx.input(0);
    for (int64_t axis = 0; axis < rank && result; ++axis) {
      int64_t before = pads[axis], after = pads[axis + rank];
      int64_t size = ctx.inputType(0).getDimSize(axis), length = size + before + after;
      if (before == 0 && after == 0)
        continue;
      if (size == 0 || length < 0)
        return ctx.error() << "wrap padding of axis " << axis << " (size " << size << ") by "
                           << before << " and " << after << " is not possible";
      SmallVector<int64_t> positions;
      for (int64_t i = 0; i < length; ++i)
        positions.push_back(((i - before) % size + size) % size);
      Value indices = ctx.constant(DenseElementsAttr::get(
          RankedTensorType::get({length}, b.getI64Type()), ArrayRef<int64_t>(positions)));
      result =
          ctx.make<GatherOp>({result, indices}, {ctx.named("axis", b.getI64IntegerAttr(axis))});
    }
    return ctx.setResult(result);
  }
  return ctx.emit<PadOp>({ctx.input(0)},
                         {ctx.named("pads", b.getDenseI64ArrayAttr(pads)),
                          ctx.named("mode", PadModeAttr::get(b.getContext(), *mode)),
                          ctx.named("value", b.getF64FloatAttr(value))});
}

LogicalResult convertGatherElements(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  std::optional<int64_t> axis = ctx.axisAttr(0, rank);
  if (!axis)
    return failure();
  return ctx.emit<GatherElementsOp>({ctx.input(0), ctx.input(1)},
                                    {ctx.named("axis", ctx.builder().getI64IntegerAttr(*axis))});
}

LogicalResult convertGatherND(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  return ctx.emit<GatherNDOp>(
      {ctx.input(0), ctx.input(1)},
      {ctx.named("batch_dims", ctx.builder().getI64IntegerAttr(ctx.intAttr("batch_dims", 0)))});
}

LogicalResult convertTile(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  auto repeats = ctx.constantInts(1, "repeats");
  if (!repeats)
    return failure();
  if (int64_t(repeats->size()) != type.getRank())
    return ctx.error() << "repeats has " << repeats->size() << " entries for rank "
                       << type.getRank();
  // Each dimension d becomes (repeats[d], d): a broadcast of (1, d), then
  // the pairs merge.
  SmallVector<int64_t> split, expanded, tiled;
  for (auto [size, times] : llvm::zip(type.getShape(), *repeats)) {
    if (times < 0)
      return ctx.error() << "repeats must not be negative, got " << times;
    int64_t product;
    if (llvm::MulOverflow(size, times, product))
      return ctx.error() << "the tiled shape has too many elements";
    split.append({1, size});
    expanded.append({times, size});
    tiled.push_back(product);
  }
  Value pairs = ctx.reshape(ctx.input(0), split);
  Value broadcast =
      pairs ? ctx.make<ExpandOp>({pairs},
                                 {ctx.named("shape", ctx.builder().getDenseI64ArrayAttr(expanded))})
            : Value();
  Value result = broadcast ? ctx.reshape(broadcast, tiled) : Value();
  return ctx.setResult(result);
}

/// DepthToSpace when `toSpace`, SpaceToDepth otherwise.
LogicalResult convertDepthToSpace(NodeContext &ctx, bool toSpace) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (type.getRank() != 4)
    return ctx.error() << "expected an N x C x H x W input, got " << type;
  int64_t block = ctx.intAttr("blocksize", 0);
  auto [n, c, h, w] =
      std::tuple(type.getDimSize(0), type.getDimSize(1), type.getDimSize(2), type.getDimSize(3));
  if (block <= 0 || (toSpace ? c % (block * block) : h % block + w % block) != 0)
    return ctx.error() << "blocksize " << block << " does not divide "
                       << (toSpace ? "the channels" : "the height and width") << " of " << type;
  SmallVector<int64_t> split, perm, merged;
  if (!toSpace) {
    split = {n, c, h / block, block, w / block, block};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {n, c * block * block, h / block, w / block};
  } else if (ctx.stringAttr("mode", "DCR") == "DCR") {
    split = {n, block, block, c / (block * block), h, w};
    perm = {0, 3, 4, 1, 5, 2};
    merged = {n, c / (block * block), h * block, w * block};
  } else if (ctx.stringAttr("mode", "DCR") == "CRD") {
    split = {n, c / (block * block), block, block, h, w};
    perm = {0, 1, 4, 2, 5, 3};
    merged = {n, c / (block * block), h * block, w * block};
  } else {
    return ctx.error() << "mode '" << ctx.stringAttr("mode", "") << "' is not DCR or CRD";
  }
  Value blocks = ctx.reshape(ctx.input(0), split);
  Value moved =
      blocks ? ctx.make<TransposeOp>({blocks},
                                     {ctx.named("perm", ctx.builder().getDenseI64ArrayAttr(perm))})
             : Value();
  Value result = moved ? ctx.reshape(moved, merged) : Value();
  return ctx.setResult(result);
}

LogicalResult convertTrilu(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (type.getRank() < 2)
    return ctx.error() << "expected a matrix or a batch of them, got " << type;
  // Keep element (i, j) where j - i >= k (upper) or j - i <= k (lower):
  // a mask from two index vectors, folded when small and k is a constant.
  int64_t rows = type.getDimSize(type.getRank() - 2), columns = type.getShape().back();
  auto i64 = ctx.builder().getI64Type();
  auto indexVector = [&](int64_t count, ArrayRef<int64_t> shape) {
    auto values = llvm::to_vector(llvm::seq<int64_t>(0, count));
    return ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get(shape, i64), ArrayRef<int64_t>(values)));
  };
  Value offset =
      ctx.make<SubOp>({indexVector(columns, {1, columns}), indexVector(rows, {rows, 1})});
  Value bound = ctx.hasInput(1) ? ctx.input(1) : ctx.scalarConstant(i64, 0.0);
  if (ctx.hasInput(1) && ctx.inputType(1).getNumElements() != 1)
    return ctx.error() << "k must be a scalar, got " << ctx.inputType(1);
  Value keep = !offset                        ? Value()
               : ctx.intAttr("upper", 1) != 0 ? ctx.make<GreaterOrEqualOp>({offset, bound})
                                              : ctx.make<LessOrEqualOp>({offset, bound});
  Value zero = ctx.scalarConstant(type.getElementType(), 0.0);
  return keep ? ctx.emit<WhereOp>({keep, ctx.input(0), zero}) : failure();
}

LogicalResult convertOneHot(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType indicesType = ctx.inputType(0), valuesType = ctx.inputType(2);
  std::optional<double> depthValue = ctx.constantScalar(1, "depth");
  if (!depthValue)
    return failure();
  int64_t depth = int64_t(*depthValue);
  if (depth <= 0 || depth > (int64_t(1) << 24))
    return ctx.error() << "depth " << *depthValue << " is not in [1, 2^24]";
  if (valuesType.getNumElements() != 2)
    return ctx.error() << "values must hold two elements (off, on), got " << valuesType;
  int64_t rank = indicesType.getRank() + 1;
  std::optional<int64_t> axis = ctx.axisAttr(-1, rank);
  if (!axis)
    return failure();
  Builder &b = ctx.builder();
  auto i64 = b.getI64Type();
  // index == position along the axis, negative indices counting from depth.
  Value indices = ctx.input(0);
  if (indicesType.getElementType() != i64)
    indices = ctx.make<CastOp>({indices}, {ctx.named("to", TypeAttr::get(i64))});
  SmallVector<int64_t> unsqueezed(indicesType.getShape());
  unsqueezed.insert(unsqueezed.begin() + *axis, 1);
  indices = indices ? ctx.reshape(indices, unsqueezed) : Value();
  Value zero = ctx.scalarConstant(i64, 0.0), depthConstant = ctx.scalarConstant(i64, double(depth));
  Value negative = indices ? ctx.make<LessOp>({indices, zero}) : Value();
  Value wrapped = negative ? ctx.make<AddOp>({indices, depthConstant}) : Value();
  indices = wrapped ? ctx.make<WhereOp>({negative, wrapped, indices}) : Value();
  SmallVector<int64_t> positionShape(rank, 1);
  positionShape[*axis] = depth;
  auto positions = llvm::to_vector(llvm::seq<int64_t>(0, depth));
  Value hot = indices ? ctx.make<EqualOp>({indices, ctx.constant(DenseElementsAttr::get(
                                                        RankedTensorType::get(positionShape, i64),
                                                        ArrayRef<int64_t>(positions)))})
                      : Value();
  Value flat = hot ? ctx.reshape(ctx.input(2), {2}) : Value();
  auto pick = [&](int64_t which) {
    return ctx.make<GatherOp>({flat, ctx.scalarConstant(i64, double(which))},
                              {ctx.named("axis", b.getI64IntegerAttr(0))});
  };
  Value off = flat ? pick(0) : Value();
  Value on = off ? pick(1) : Value();
  return on ? ctx.emit<WhereOp>({hot, on, off}) : failure();
}

/// ScatterND when `nd`, ScatterElements otherwise.
LogicalResult convertScatter(NodeContext &ctx, bool nd) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  std::string reduction = ctx.stringAttr("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return ctx.error() << "reduction '" << reduction << "' is not none, add, mul, max or min";
  Builder &b = ctx.builder();
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1), ctx.input(2)};
  if (nd)
    return ctx.emit<ScatterNDOp>(operands, {ctx.named("reduction", b.getStringAttr(reduction))});
  int64_t rank = ctx.inputType(0).getRank();
  std::optional<int64_t> axis = ctx.axisAttr(0, rank);
  if (!axis)
    return failure();
  return ctx.emit<ScatterElementsOp>(operands,
                                     {ctx.named("axis", b.getI64IntegerAttr(*axis)),
                                      ctx.named("reduction", b.getStringAttr(reduction))});
}

} // namespace

void registerDataMovementOperators(OperatorTable &ops) {
  ops.onOp("Compress", 9, convertCompress);
  ops.onOp("Concat", 1, convertConcat);
  ops.onOp("DepthToSpace", 1, [](NodeContext &ctx) { return convertDepthToSpace(ctx, true); });
  ops.onOp("Expand", 8, convertExpand);
  ops.onOp("Flatten", 1, convertFlatten);
  ops.onOp("Gather", 1, convertGather);
  ops.onOp("GatherElements", 11, convertGatherElements);
  ops.onOp("GatherND", 11, convertGatherND);
  ops.onOp("OneHot", 9, convertOneHot);
  ops.onOp("Pad", 1, convertPad);
  ops.onOp("Reshape", 1, convertReshape);
  ops.onOp("ReverseSequence", 10, convertReverseSequence);
  ops.onOp("ScatterElements", 11, [](NodeContext &ctx) { return convertScatter(ctx, false); });
  ops.onOp("ScatterND", 11, [](NodeContext &ctx) { return convertScatter(ctx, true); });
  ops.onOp("Slice", 1, convertSlice);
  ops.onOp("SpaceToDepth", 1, [](NodeContext &ctx) { return convertDepthToSpace(ctx, false); });
  ops.onOp("Split", 1, convertSplit);
  ops.onOp("Squeeze", 1, convertSqueeze);
  ops.onOp("Tile", 6, convertTile);
  ops.onOp("Transpose", 1, convertTranspose);
  ops.onOp("Trilu", 14, convertTrilu);
  ops.onOp("Unsqueeze", 1, convertUnsqueeze);
  ops.takeSymbols({"Concat", "Expand", "Flatten", "Gather", "Reshape", "Slice", "Split", "Squeeze",
                   "Transpose", "Unsqueeze"});
}

} // namespace kiln
