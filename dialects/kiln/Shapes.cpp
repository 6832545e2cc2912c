// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Shapes.cpp - checked shape arithmetic ------------------------------===//

#include "dialects/kiln/Shapes.h"

#include "llvm/Support/MathExtras.h"

using llvm::ArrayRef;
using llvm::SmallVector;

namespace kiln {

std::optional<int64_t> elementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || llvm::MulOverflow(count, dim, count))
      return std::nullopt;
  }
  return count;
}

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align trailing dimensions; a missing leading dimension acts as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = da == 1 ? db : da;
  }
  return result;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

SmallVector<int64_t> broadcastIndexMap(ArrayRef<int64_t> operand, ArrayRef<int64_t> result) {
  size_t rank = result.size(), offset = rank - operand.size();
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  int64_t count = *elementCount(result);
  SmallVector<int64_t> map(count, 0);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t source = 0;
    for (size_t d = offset; d < rank; ++d)
      if (operand[d - offset] != 1)
        source += index[d] * operandStrides[d - offset];
    map[flat] = source;
    // Advance the row-major multi-index.
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < result[d])
        break;
      index[d] = 0;
    }
  }
  return map;
}

std::optional<int64_t> windowOutputSize(int64_t input, int64_t kernel, int64_t stride,
                                        int64_t padBegin, int64_t padEnd, int64_t dilation,
                                        bool ceilMode) {
  if (input < 0 || kernel <= 0 || stride <= 0 || dilation <= 0 || padBegin < 0 || padEnd < 0)
    return std::nullopt;
  int64_t effectiveKernel, padded;
  if (llvm::MulOverflow(dilation, kernel - 1, effectiveKernel) ||
      llvm::AddOverflow(effectiveKernel, int64_t(1), effectiveKernel) ||
      llvm::AddOverflow(input, padBegin, padded) || llvm::AddOverflow(padded, padEnd, padded) ||
      padded < effectiveKernel)
    return std::nullopt;
  int64_t span = padded - effectiveKernel;
  int64_t size = (ceilMode ? llvm::divideCeil(span, stride) : span / stride) + 1;
  // With ceil_mode, the last window must still start inside the input or its
  // leading padding, as in ONNX's reference and PyTorch.
  if (ceilMode && (size - 1) * stride >= input + padBegin)
    --size;
  return size;
}

} // namespace kiln
