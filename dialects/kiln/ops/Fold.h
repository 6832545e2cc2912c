// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Fold.h - constant folding helpers for kiln ops -----------*- C++ -*-===//
//
// Folding exists so that the shape arithmetic exporters emit (Shape, Gather,
// Unsqueeze, Concat feeding a Reshape) and the masks and position ids they
// build from it (Range, comparisons, Where, Expand over sequence x sequence)
// collapse to constants as they are built, once --input-shape fixes the
// shapes. It only reads constants held inline (splats, initializers of at
// most kInlineBytes, and what folding made): weights, held as resource
// blobs, are never copied.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_OPS_FOLD_H
#define KILN_DIALECTS_KILN_OPS_FOLD_H

#include "dialects/kiln/Dims.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// Folded results with more elements than this (a mask of 1024 x 1024) are
/// left to kernels unless splat: beyond it a constant costs more artifact
/// bytes and compile time than computing it does.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 20;

/// `attr` as dense elements when it is held inline (not a weight's blob)
/// and is a splat or at most kMaxFoldedElements, else null.
mlir::DenseElementsAttr foldableConstant(mlir::Attribute attr);

/// The elements of a folded integer tensor as sizes: a kiln.dims value's
/// expressions (see DimsOp), or nothing for any other attribute.
std::optional<Dims> symbolicElements(mlir::Attribute attr);
/// The elements of a small integer constant or kiln.dims value as sizes.
std::optional<Dims> sizeElements(mlir::Attribute attr);
/// An integer tensor of `type` holding `elements`: dense when each is a
/// constant, a #kiln.dims value otherwise.
mlir::Attribute sizesAttr(mlir::RankedTensorType type, llvm::ArrayRef<mlir::AffineExpr> elements);

/// A tensor of `type` whose element i is element `sourceIndex(i)` of `input`
/// (a constant or a kiln.dims value); null when `input` is not cheaply
/// foldable or the result is too large.
mlir::Attribute remapElements(mlir::Attribute input, mlir::RankedTensorType type,
                                      llvm::function_ref<int64_t(int64_t)> sourceIndex);

/// Computes an elementwise op over broadcast constant operands. `compute`
/// takes one IntegerAttr/FloatAttr per operand and the result element type,
/// and returns the result element or null to give up (e.g. division by zero).
using ElementFn = llvm::function_ref<mlir::Attribute(llvm::ArrayRef<mlir::Attribute>, mlir::Type)>;
mlir::DenseElementsAttr foldElementwise(llvm::ArrayRef<mlir::Attribute> operands,
                                        mlir::RankedTensorType type, ElementFn compute);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_OPS_FOLD_H
