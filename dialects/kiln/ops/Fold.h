//===- Fold.h - constant folding helpers for kiln ops -----------*- C++ -*-===//
//
// Folding exists so that the shape arithmetic exporters emit (Shape, Gather,
// Unsqueeze, Concat feeding a Reshape) collapses to constants as it is built.
// It only ever touches splats and small tensors: weights are never copied.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_OPS_FOLD_H
#define KILN_DIALECTS_KILN_OPS_FOLD_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// Tensors with more elements than this are folded only when splat.
constexpr int64_t kMaxFoldedElements = 1024;

/// `attr` as dense elements when folding it is cheap (a splat or a small
/// tensor), else null.
mlir::DenseElementsAttr foldableConstant(mlir::Attribute attr);

/// A tensor of `type` whose element i is element `sourceIndex(i)` of `input`;
/// null when `input` is not cheaply foldable or the result is too large.
mlir::DenseElementsAttr remapElements(mlir::Attribute input, mlir::RankedTensorType type,
                                      llvm::function_ref<int64_t(int64_t)> sourceIndex);

/// Computes an elementwise op over broadcast constant operands. `compute`
/// takes one IntegerAttr/FloatAttr per operand and the result element type,
/// and returns the result element or null to give up (e.g. division by zero).
using ElementFn = llvm::function_ref<mlir::Attribute(llvm::ArrayRef<mlir::Attribute>, mlir::Type)>;
mlir::DenseElementsAttr foldElementwise(llvm::ArrayRef<mlir::Attribute> operands,
                                        mlir::RankedTensorType type, ElementFn compute);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_OPS_FOLD_H
