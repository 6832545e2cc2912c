// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- DataMovement.cpp - reshape, transpose, concat, split, slice, ... ---===//

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Shapes.h"
#include "dialects/kiln/ops/Fold.h"

#include "mlir/IR/Diagnostics.h"

#include <limits>

using namespace mlir;

namespace kiln {

namespace {

/// Decomposes a row-major flat index of `shape` into a multi-index.
SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

/// The indices of gather_elements and scatter_elements: as many dimensions
/// as `data`, none but `axis` larger, and none into an empty axis.
LogicalResult checkElementIndices(std::optional<Location> location, RankedTensorType data,
                                  RankedTensorType indices, int64_t axis) {
  if (axis < 0 || axis >= data.getRank())
    return emitOptionalError(location, "axis ", axis, " is out of range for ", data);
  if (indices.getRank() != data.getRank())
    return emitOptionalError(location, "indices ", indices, " and ", data, " differ in rank");
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && indices.getDimSize(d) > data.getDimSize(d))
      return emitOptionalError(location, "dimension ", d, " of indices ", indices,
                               " is larger than that of ", data);
  if (data.getDimSize(axis) == 0 && indices.getNumElements() != 0)
    return emitOptionalError(location, "indices into an empty axis of ", data);
  return success();
}

bool isScatterReduction(StringRef reduction) {
  return llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction);
}

int64_t flatten(ArrayRef<int64_t> index, ArrayRef<int64_t> strides) {
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d)
    flat += index[d] * strides[d];
  return flat;
}

} // namespace

/// The dimensions `shape` and `dims` give an op's target (kiln.reshape's,
/// kiln.expand's): `dims` where set, whose constants must be `shape`'s.
FailureOr<Dims> targetDims(std::optional<Location> location, MLIRContext *context,
                           ArrayRef<int64_t> shape, DimsAttr dims) {
  if (!dims)
    return constantDims(context, shape);
  ArrayRef<AffineExpr> exprs = dims.getMap().getResults();
  if (exprs.size() != shape.size())
    return emitOptionalError(location, "dims gives ", exprs.size(), " sizes for a shape of ",
                             shape.size());
  for (auto [size, expr] : llvm::zip(shape, exprs))
    if (constantOf(expr).value_or(ShapedType::kDynamic) != size)
      return emitOptionalError(location, "shape [", shape, "] disagrees with dims ", dims);
  return Dims(exprs);
}

/// Reports that `op` takes no symbolic shapes yet when one of `types` has one.
LogicalResult requireStatic(std::optional<Location> location, StringRef op, TypeRange types) {
  for (Type type : types)
    if (isSymbolic(type))
      return emitOptionalError(location, op, " does not take symbolic shapes yet, got ", type);
  return success();
}

//===----------------------------------------------------------------------===//
// kiln.reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> shape = adaptor.getShape();
  FailureOr<Dims> dims = targetDims(location, input.getContext(), shape, adaptor.getDimsAttr());
  if (failed(dims))
    return failure();
  if (!isSymbolic(input) && !adaptor.getDimsAttr()) {
    std::optional<int64_t> count = elementCount(shape);
    if (!count)
      return emitOptionalError(location, "shape has a negative dimension or too many elements");
    if (*count != input.getNumElements())
      return emitOptionalError(location, "cannot reshape ", input.getNumElements(),
                               " elements into ", *count);
  } else if (!sameSize(productOf(input.getContext(), dimsOf(input)),
                       productOf(input.getContext(), *dims))) {
    return emitOptionalError(location, "cannot reshape ", input, " into ", printDims(*dims, {}));
  }
  types.push_back(withDims(input, *dims));
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (DenseElementsAttr value = foldableConstant(adaptor.getInput()))
    return value.reshape(getType());
  if (std::optional<Dims> sizes = symbolicElements(adaptor.getInput()))
    return sizesAttr(getType(), *sizes);
  // A reshape of a reshape reads the first one's input (in place).
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getInput().getType() == getType() ? getInput() : getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// kiln.transpose
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(input.getRank(), false);
  if (int64_t(perm.size()) != input.getRank())
    return emitOptionalError(location, "perm has ", perm.size(), " entries for rank ",
                             input.getRank());
  Dims inputDims = dimsOf(input), dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank() || seen[p])
      return emitOptionalError(location, "perm is not a permutation of [0, ", input.getRank(), ")");
    seen[p] = true;
    dims.push_back(inputDims[p]);
  }
  types.push_back(withDims(input, dims));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  // A transpose of a transpose is one transpose, of the first one's input
  // (in place): output dim i is inner output dim perm[i], which is input dim
  // innerPerm[perm[i]].
  bool composed = false;
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> perm;
    for (int64_t p : getPerm())
      perm.push_back(inner.getPerm()[p]);
    getInputMutable().assign(inner.getInput());
    setPerm(perm);
    composed = true;
  }
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  if (composed || isSymbolic(getType()))
    return composed ? getResult() : OpFoldResult();
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  ArrayRef<int64_t> outShape = getType().getShape();
  if (composed)
    return getResult();
  return remapElements(adaptor.getInput(), getType(), [&](int64_t flat) {
    SmallVector<int64_t> out = unflatten(flat, outShape);
    int64_t source = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      source += out[d] * inStrides[perm[d]];
    return source;
  });
}

//===----------------------------------------------------------------------===//
// kiln.concat and kiln.split
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(location, "needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  int64_t axis = int64_t(adaptor.getAxis());
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(location, "axis ", axis, " is out of range for ", first);
  Dims dims = dimsOf(first);
  dims[axis] = getAffineConstantExpr(0, first.getContext());
  int64_t total = 0;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != first.getElementType() || type.getRank() != first.getRank())
      return emitOptionalError(location, "inputs differ in rank or element type: ", first, " vs ",
                               type);
    Dims inputDims = dimsOf(type);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis && inputDims[d] != dims[d])
        return emitOptionalError(location, "inputs differ in dimension ", d, ": ", first, " vs ",
                                 type);
    if (!type.isDynamicDim(axis) && llvm::AddOverflow(total, type.getDimSize(axis), total))
      return emitOptionalError(location, "concatenated dimension overflows");
    dims[axis] = dims[axis] + inputDims[axis];
  }
  types.push_back(withDims(first, dims));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  if (isSymbolic(getType()))
    return {};
  if (getType().getRank() == 1 && llvm::any_of(adaptor.getInputs(), [](Attribute input) {
        return symbolicElements(input).has_value();
      })) {
    Dims sizes;
    for (Attribute input : adaptor.getInputs()) {
      std::optional<Dims> part = sizeElements(input);
      if (!part)
        return {};
      llvm::append_range(sizes, *part);
    }
    return sizesAttr(getType(), sizes);
  }
  SmallVector<DenseElementsAttr> parts;
  for (Attribute input : adaptor.getInputs()) {
    parts.push_back(foldableConstant(input));
    if (!parts.back())
      return {};
  }
  RankedTensorType type = getType();
  if (type.getNumElements() > kMaxFoldedElements)
    return {};
  // Walk the result in row-major order: each "row" above the axis takes a
  // contiguous run from every part in turn.
  int64_t axis = int64_t(getAxis());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr part : parts) {
    values.push_back(part.isSplat() ? SmallVector<Attribute>(part.getNumElements(),
                                                             part.getSplatValue<Attribute>())
                                    : llvm::to_vector(part.getValues<Attribute>()));
  }
  SmallVector<Attribute> result;
  for (int64_t row = 0; row < outer; ++row)
    for (auto &part : values) {
      int64_t run = int64_t(part.size()) / outer;
      result.append(part.begin() + row * run, part.begin() + (row + 1) * run);
    }
  return DenseElementsAttr::get(type, result);
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = int64_t(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(location, "axis ", axis, " is out of range for ", input);
  if (input.isDynamicDim(axis))
    return emitOptionalError(location, "cannot split symbolic dimension ", axis, " of ", input);
  int64_t total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0 || llvm::AddOverflow(total, size, total))
      return emitOptionalError(location, "split sizes must be non-negative");
    Dims dims = dimsOf(input);
    dims[axis] = getAffineConstantExpr(size, input.getContext());
    types.push_back(withDims(input, dims));
  }
  if (total != input.getDimSize(axis))
    return emitOptionalError(location, "split sizes add up to ", total, ", not to dimension ", axis,
                             " of size ", input.getDimSize(axis));
  return success();
}

//===----------------------------------------------------------------------===//
// kiln.slice
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds(),
                    steps = adaptor.getSteps();
  int64_t rank = input.getRank();
  if (int64_t(starts.size()) != rank || int64_t(ends.size()) != rank ||
      int64_t(steps.size()) != rank)
    return emitOptionalError(location, "needs one start, end and step per dimension");
  Dims inputDims = dimsOf(input), dims;
  DimsAttr bounds = adaptor.getBoundsAttr();
  if (bounds && int64_t(bounds.getMap().getNumResults()) != 2 * rank)
    return emitOptionalError(location, "bounds must give ", 2 * rank, " expressions");
  for (int64_t d = 0; d < rank; ++d) {
    bool symbolic =
        input.isDynamicDim(d) || ShapedType::isDynamic(starts[d]) || ShapedType::isDynamic(ends[d]);
    if (symbolic) {
      if (!bounds || steps[d] != 1)
        return emitOptionalError(location, "dimension ", d,
                                 " is symbolic: it takes bounds and step 1");
      dims.push_back(bounds.getMap().getResult(rank + d) - bounds.getMap().getResult(d));
      continue;
    }
    int64_t dim = input.getDimSize(d), start = starts[d], end = ends[d], step = steps[d];
    if (step == std::numeric_limits<int64_t>::min())
      return emitOptionalError(location, "dimension ", d, ": step ", step, " is out of range");
    bool inRange = step > 0 ? (start >= 0 && start <= dim && end >= 0 && end <= dim)
                            : (start >= -1 && start < dim && end >= -1 && end < dim);
    if (step == 0 || !inRange)
      return emitOptionalError(location, "dimension ", d, ": start ", start, ", end ", end,
                               ", step ", step, " are not normalized for size ", dim);
    int64_t span = step > 0 ? end - start : start - end;
    int64_t absStep = step > 0 ? step : -step;
    dims.push_back(
        getAffineConstantExpr(span <= 0 ? 0 : llvm::divideCeil(span, absStep), input.getContext()));
  }
  types.push_back(withDims(input, dims));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  // Same shape and forward steps: the whole input. (A negative step over a
  // whole dimension keeps the shape but reverses it.)
  if (getInput().getType() == getType() &&
      llvm::all_of(getSteps(), [](int64_t step) { return step > 0; }))
    return getInput();
  if (isSymbolic(getInput().getType()))
    return {};
  SmallVector<int64_t> inStrides = stridesOf(getInput().getType().getShape());
  ArrayRef<int64_t> outShape = getType().getShape();
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  return remapElements(adaptor.getInput(), getType(), [&](int64_t flat) {
    SmallVector<int64_t> index = unflatten(flat, outShape);
    for (size_t d = 0; d < index.size(); ++d)
      index[d] = starts[d] + index[d] * steps[d];
    return flatten(index, inStrides);
  });
}

//===----------------------------------------------------------------------===//
// kiln.gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t axis = int64_t(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(location, "axis ", axis, " is out of range for ", input);
  Dims inputDims = dimsOf(input);
  Dims dims(ArrayRef<AffineExpr>(inputDims).take_front(axis));
  llvm::append_range(dims, dimsOf(indices));
  llvm::append_range(dims, ArrayRef(inputDims).drop_front(axis + 1));
  types.push_back(withDims(input, dims));
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr indices = foldableConstant(adaptor.getIndices());
  if (!indices || (!foldableConstant(adaptor.getInput()) && !symbolicElements(adaptor.getInput())))
    return {};
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  int64_t axis = int64_t(getAxis()), axisSize = inShape[axis];
  // A splat holds one index however many elements it has.
  SmallVector<int64_t> positions;
  auto values = indices.isSplat() ? SmallVector<APInt>{indices.getSplatValue<APInt>()}
                                  : llvm::to_vector(indices.getValues<APInt>());
  for (const APInt &index : values) {
    int64_t i = index.getSExtValue();
    if (i < -axisSize || i >= axisSize)
      return {}; // Out of range: left for the runtime to report.
    positions.push_back(i < 0 ? i + axisSize : i);
  }
  int64_t indexCount = indices.getNumElements();
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < int64_t(inShape.size()); ++d)
    inner *= inShape[d];
  return remapElements(adaptor.getInput(), getType(), [&](int64_t flat) {
    // The result is [outer, indexCount, inner] in row-major order.
    int64_t innerPos = flat % inner;
    int64_t which = (flat / inner) % indexCount;
    int64_t outerPos = flat / (inner * indexCount);
    int64_t position = indices.isSplat() ? positions[0] : positions[which];
    return (outerPos * axisSize + position) * inner + innerPos;
  });
}

//===----------------------------------------------------------------------===//
// kiln.gather_elements
//===----------------------------------------------------------------------===//

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                 Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (failed(requireStatic(location, "kiln.gather_elements",
                           {adaptor.getInput().getType(), adaptor.getIndices().getType()})))
    return failure();
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (failed(checkElementIndices(location, input, indices, int64_t(adaptor.getAxis()))))
    return failure();
  types.push_back(input.clone(indices.getShape()));
  return success();
}

OpFoldResult GatherElementsOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr indices = foldableConstant(adaptor.getIndices());
  if (!indices || !foldableConstant(adaptor.getInput()))
    return {};
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t axis = int64_t(getAxis()), axisSize = inShape[axis];
  SmallVector<int64_t> strides = stridesOf(inShape);
  auto values = llvm::to_vector(indices.getValues<APInt>());
  if (llvm::any_of(values, [&](const APInt &index) {
        int64_t i = index.getSExtValue();
        return i < -axisSize || i >= axisSize;
      }))
    return {}; // Out of range: left to the kernel, which clamps.
  return remapElements(adaptor.getInput(), getType(), [&](int64_t flat) {
    SmallVector<int64_t> at = unflatten(flat, shape);
    int64_t index = values[indices.isSplat() ? 0 : flat].getSExtValue();
    at[axis] = index < 0 ? index + axisSize : index;
    return flatten(at, strides);
  });
}

//===----------------------------------------------------------------------===//
// kiln.gather_nd
//===----------------------------------------------------------------------===//

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (failed(requireStatic(location, "kiln.gather_nd",
                           {adaptor.getInput().getType(), adaptor.getIndices().getType()})))
    return failure();
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t batchDims = int64_t(adaptor.getBatchDims());
  if (indices.getRank() < 1)
    return emitOptionalError(location, "indices ", indices, " must have rank 1 or more");
  int64_t tuple = indices.getShape().back();
  if (batchDims < 0 || batchDims >= std::min(input.getRank(), indices.getRank()))
    return emitOptionalError(location, "batch_dims ", batchDims,
                             " must be below both ranks of input ", input, " and indices ",
                             indices);
  if (tuple < 1 || batchDims + tuple > input.getRank())
    return emitOptionalError(location, "index tuples of ", tuple, " entries after ", batchDims,
                             " batch dimensions do not address input ", input);
  if (indices.getNumElements() != 0 &&
      llvm::is_contained(input.getShape().slice(batchDims, tuple), 0))
    return emitOptionalError(location, "indices address an empty dimension of ", input);
  if (input.getShape().take_front(batchDims) != indices.getShape().take_front(batchDims))
    return emitOptionalError(location, "the batch dimensions of input ", input, " and indices ",
                             indices, " differ");
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, input.getShape().drop_front(batchDims + tuple));
  types.push_back(input.clone(shape));
  return success();
}

OpFoldResult GatherNDOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr indices = foldableConstant(adaptor.getIndices());
  if (!indices || !foldableConstant(adaptor.getInput()))
    return {};
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  ArrayRef<int64_t> indexShape = getIndices().getType().getShape();
  int64_t batchDims = int64_t(getBatchDims()), tuple = indexShape.back();
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  int64_t inner = 1;
  for (int64_t size : inShape.drop_front(batchDims + tuple))
    inner *= size;
  int64_t tuples = indices.getNumElements() / tuple;
  // Each tuple's flat offset into the input (batch offset included).
  SmallVector<int64_t> offsets;
  auto values = indices.isSplat()
                    ? SmallVector<APInt>(indices.getNumElements(), indices.getSplatValue<APInt>())
                    : llvm::to_vector(indices.getValues<APInt>());
  int64_t batchInner = 1;
  for (int64_t size : indexShape.drop_front(batchDims).drop_back())
    batchInner *= size;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t batch = batchInner ? t / batchInner : 0, offset = 0;
    for (int64_t d = batchDims - 1, rest = batch; d >= 0; --d) {
      offset += (rest % inShape[d]) * inStrides[d];
      rest /= inShape[d];
    }
    for (int64_t k = 0; k < tuple; ++k) {
      int64_t size = inShape[batchDims + k], i = values[t * tuple + k].getSExtValue();
      if (i < -size || i >= size)
        return {}; // Out of range: left to the kernel, which clamps.
      offset += (i < 0 ? i + size : i) * inStrides[batchDims + k];
    }
    offsets.push_back(offset);
  }
  return remapElements(adaptor.getInput(), getType(),
                       [&](int64_t flat) { return offsets[flat / inner] + flat % inner; });
}

//===----------------------------------------------------------------------===//
// kiln.scatter_elements and kiln.scatter_nd
//===----------------------------------------------------------------------===//

LogicalResult ScatterElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                  Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (failed(requireStatic(location, "kiln.scatter_elements", adaptor.getOperands().getTypes())))
    return failure();
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  auto updates = cast<RankedTensorType>(adaptor.getUpdates().getType());
  if (!isScatterReduction(adaptor.getReduction()))
    return emitOptionalError(location, "reduction '", adaptor.getReduction(),
                             "' is not none, add, mul, max or min");
  if (updates.getShape() != indices.getShape() || updates.getElementType() != data.getElementType())
    return emitOptionalError(location, "updates ", updates, " must have the shape of indices ",
                             indices, " and the element type of data ", data);
  if (failed(checkElementIndices(location, data, indices, int64_t(adaptor.getAxis()))))
    return failure();
  types.push_back(data);
  return success();
}

LogicalResult ScatterNDOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (failed(requireStatic(location, "kiln.scatter_nd", adaptor.getOperands().getTypes())))
    return failure();
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  auto updates = cast<RankedTensorType>(adaptor.getUpdates().getType());
  if (!isScatterReduction(adaptor.getReduction()))
    return emitOptionalError(location, "reduction '", adaptor.getReduction(),
                             "' is not none, add, mul, max or min");
  if (indices.getRank() < 1)
    return emitOptionalError(location, "indices ", indices, " must have rank 1 or more");
  int64_t tuple = indices.getShape().back();
  if (tuple < 1 || tuple > data.getRank())
    return emitOptionalError(location, "index tuples of ", tuple, " entries do not address data ",
                             data);
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(tuple));
  if (updates.getShape() != ArrayRef(shape) || updates.getElementType() != data.getElementType())
    return emitOptionalError(location, "updates ", updates, " must be ",
                             RankedTensorType::get(shape, data.getElementType()));
  if (indices.getNumElements() != 0 && llvm::is_contained(data.getShape().take_front(tuple), 0))
    return emitOptionalError(location, "indices address an empty dimension of ", data);
  types.push_back(data);
  return success();
}

//===----------------------------------------------------------------------===//
// kiln.expand
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  FailureOr<Dims> target =
      targetDims(location, input.getContext(), adaptor.getShape(), adaptor.getDimsAttr());
  if (failed(target))
    return failure();
  auto dims = broadcastDims(dimsOf(input), *target);
  RankedTensorType result = dims ? withDims(input, *dims) : RankedTensorType();
  if (!result || !isKilnTensor(result))
    return emitOptionalError(location, input, " does not broadcast to shape ",
                             printDims(*target, {}));
  types.push_back(result);
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  DenseElementsAttr input = foldableConstant(adaptor.getInput());
  if (!input || isSymbolic(getType()))
    return {};
  SmallVector<int64_t> map;
  if (!input.isSplat() && getType().getNumElements() <= kMaxFoldedElements)
    map = broadcastIndexMap(getInput().getType().getShape(), getType().getShape());
  return remapElements(input, getType(), [&](int64_t flat) { return map[flat]; });
}

//===----------------------------------------------------------------------===//
// kiln.pad
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                      Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = input.getRank();
  if (int64_t(pads.size()) != 2 * rank)
    return emitOptionalError(location, "expected ", 2 * rank, " pads, got ", pads.size());
  Dims dims = dimsOf(input);
  for (int64_t d = 0; d < rank; ++d) {
    if (input.isDynamicDim(d)) {
      if (adaptor.getMode() == PadMode::reflect)
        return emitOptionalError(location, "cannot reflect-pad symbolic dimension ", d);
      int64_t both;
      if (llvm::AddOverflow(pads[d], pads[d + rank], both))
        return emitOptionalError(location, "dimension ", d, " pads overflow");
      dims[d] = dims[d] + both;
      continue;
    }
    int64_t size;
    if (llvm::AddOverflow(input.getDimSize(d), pads[d], size) ||
        llvm::AddOverflow(size, pads[d + rank], size) || size < 0)
      return emitOptionalError(location, "dimension ", d, " padded to a negative size");
    if (adaptor.getMode() == PadMode::reflect &&
        (pads[d] >= input.getDimSize(d) || pads[d + rank] >= input.getDimSize(d)))
      return emitOptionalError(location, "reflect pads must be smaller than dimension ", d);
    dims[d] = getAffineConstantExpr(size, input.getContext());
  }
  types.push_back(withDims(input, dims));
  return success();
}

//===----------------------------------------------------------------------===//
// kiln.tensor_map
//===----------------------------------------------------------------------===//

LogicalResult TensorMapOp::verify() {
  // The limits of cuTensorMapEncodeTiled, which the runtime calls.
  ArrayRef<int64_t> dims = getDims(), strides = getStrides(), box = getBox();
  if (!getBuffer().getType().getElementType().isF32())
    return emitOpError("maps f32 buffers only");
  if (dims.empty() || dims.size() > 5)
    return emitOpError("has ") << dims.size() << " dimensions; a tensor map has 1 to 5";
  if (strides.size() + 1 != dims.size() || box.size() != dims.size())
    return emitOpError(
        "needs a stride for every dimension but the first and a box extent for each");
  for (int64_t dim : dims)
    if (dim < 1 || dim > (int64_t(1) << 32))
      return emitOpError("has a dimension of ") << dim << " elements, outside [1, 2^32]";
  for (int64_t stride : strides)
    if (stride < 1 || stride * 4 % 16 != 0 || stride * 4 >= (int64_t(1) << 40))
      return emitOpError("has a stride of ")
             << stride << " elements; strides are multiples of 16 bytes below 2^40";
  for (int64_t extent : box)
    if (extent < 1 || extent > 256)
      return emitOpError("has a box extent of ") << extent << "; extents are 1 to 256";
  int64_t swizzle = getSwizzle();
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitOpError("swizzles within ") << swizzle << " bytes; expected 0, 32, 64 or 128";
  if (box[0] * 4 % 16 != 0 || (swizzle && box[0] * 4 > swizzle))
    return emitOpError("has a box row of ")
           << box[0] * 4 << " bytes; rows are multiples of 16 bytes, at most the swizzle span";
  return success();
}

} // namespace kiln
