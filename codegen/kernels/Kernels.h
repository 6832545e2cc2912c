// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Kernels.h - kernel generators: kiln ops to linalg --------*- C++ -*-===//
//
// A kernel generator turns one kind of kiln op into target-independent
// linalg on tensors. Targets (codegen/nvptx, codegen/amdgpu, the host) take
// it from there, so no generator knows which chip it runs on.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_KERNELS_KERNELS_H
#define KILN_CODEGEN_KERNELS_KERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include <cstddef>

namespace kiln {

/// Makes every unsigned integer type in `module` signless, recording on
/// each kiln op which of its operands and results were unsigned: arith
/// computes on signless integers and says signedness by the op.
void eraseSignedness(mlir::ModuleOp module);
/// Whether operand (result) `index` of `op` was unsigned before
/// eraseSignedness.
bool unsignedOperand(mlir::Operation *op, unsigned index);
bool unsignedResult(mlir::Operation *op, unsigned index);

/// Conv, Gemm and MatMul as linalg contractions.
void populateMatmulLikeKernels(mlir::RewritePatternSet &patterns);

/// Elementwise ops (with broadcasting), casts, Expand and BatchNormalization
/// as linalg.generic.
void populateElementwiseKernels(mlir::RewritePatternSet &patterns);

/// Reductions, Softmax, LayerNormalization and pooling.
void populateReductionKernels(mlir::RewritePatternSet &patterns);

/// Reshape, Transpose, Concat, Split, Slice, Gather and Pad.
void populateDataMovementKernels(mlir::RewritePatternSet &patterns);

/// The most slices of one buffer a Concat or Split makes. One-Shot
/// analysis costs time that grows with the square of the number of views
/// of one buffer (the cube, for a chain of insertions), so wider ones are
/// built as trees of groups, each group in a buffer of its own
/// (bufferization.alloc_tensor, which empty-tensor elimination leaves
/// alone). Each level past the first costs a copy of the data; the
/// analysis stays linear in the number of inputs or outputs.
constexpr std::size_t kGroupWidth = 32;

} // namespace kiln

#endif // KILN_CODEGEN_KERNELS_KERNELS_H
