// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Pooling.cpp - pooling and reductions -------------------------------===//

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace kiln {

LogicalResult inferPoolResult(std::optional<Location> location, Type inputType,
                              ArrayRef<int64_t> kernelShape, ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations, bool ceilMode,
                              bool channelsLast, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(inputType);
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1)
    return emitOptionalError(location, "input must have rank 3 or more, got ", input);
  if (channelsLast)
    input = channelsFirst(input);
  if (int64_t(kernelShape.size()) != spatial || int64_t(strides.size()) != spatial ||
      int64_t(dilations.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    return emitOptionalError(location, "expected ", spatial,
                             " kernel sizes, strides and dilations and ", 2 * spatial, " pads");
  Dims inputDims = dimsOf(input);
  Dims dims(ArrayRef<AffineExpr>(inputDims).take_front(2));
  for (int64_t i = 0; i < spatial; ++i) {
    // A window made only of padding would have nothing to pool.
    if (pads[i] >= kernelShape[i] || pads[i + spatial] >= kernelShape[i])
      return emitOptionalError(location, "pads must be smaller than the kernel");
    auto size = windowOutputDim(inputDims[i + 2], kernelShape[i], strides[i], pads[i],
                                pads[i + spatial], dilations[i], ceilMode);
    if (!size)
      return emitOptionalError(location, "window does not fit spatial dimension ", i, " (size ",
                               printDim(inputDims[i + 2], {}), ")");
    dims.push_back(*size);
  }
  auto result = withDims(input, dims);
  types.push_back(channelsLast ? kiln::channelsLast(result) : result);
  return success();
}

LogicalResult GlobalAveragePoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                    Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 3)
    return emitOptionalError(location, "input must have rank 3 or more, got ", input);
  Dims dims = dimsOf(input);
  AffineExpr one = getAffineConstantExpr(1, input.getContext());
  if (adaptor.getChannelsLast())
    std::fill(dims.begin() + 1, dims.end() - 1, one);
  else
    std::fill(dims.begin() + 2, dims.end(), one);
  types.push_back(withDims(input, dims));
  return success();
}

LogicalResult inferReduceResult(std::optional<Location> location, Type inputType,
                                ArrayRef<int64_t> axes, bool keepdims,
                                SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(inputType);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= input.getRank() || (i && axes[i] <= axes[i - 1]))
      return emitOptionalError(location, "axes must be sorted, unique and in [0, ", input.getRank(),
                               ")");
  }
  Dims inputDims = dimsOf(input), dims;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      dims.push_back(inputDims[d]);
    else if (keepdims)
      dims.push_back(getAffineConstantExpr(1, input.getContext()));
  }
  types.push_back(withDims(input, dims));
  return success();
}

LogicalResult CumSumOp::verify() {
  int64_t axis = int64_t(getAxis()), rank = getInput().getType().getRank();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for rank " << rank;
  return success();
}

} // namespace kiln
