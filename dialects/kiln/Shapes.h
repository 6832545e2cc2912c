// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Shapes.h - shape arithmetic shared by ops and the importer -*- C++ -*-===//
//
// Every size here may come from an untrusted model, so all of it is checked:
// nothing overflows silently.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_SHAPES_H
#define KILN_DIALECTS_KILN_SHAPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace kiln {

/// The number of elements of a static shape, or nullopt when a dimension is
/// negative or the product does not fit in int64_t.
std::optional<int64_t> elementCount(llvm::ArrayRef<int64_t> shape);

/// The NumPy broadcast of two shapes, or nullopt when they are incompatible.
std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                          llvm::ArrayRef<int64_t> b);

/// `axis` in [-rank, rank) made non-negative, or nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Row-major strides of a shape.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

/// For each element of a tensor of shape `result` (row-major), the index of
/// the element of a tensor of shape `operand` that broadcasts onto it.
llvm::SmallVector<int64_t> broadcastIndexMap(llvm::ArrayRef<int64_t> operand,
                                             llvm::ArrayRef<int64_t> result);

/// The output size of a window (convolution or pooling) along one dimension,
/// or nullopt when the window does not fit.
std::optional<int64_t> windowOutputSize(int64_t input, int64_t kernel, int64_t stride,
                                        int64_t padBegin, int64_t padEnd, int64_t dilation,
                                        bool ceilMode);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_SHAPES_H
