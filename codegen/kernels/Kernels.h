//===- Kernels.h - kernel generators: kiln ops to linalg --------*- C++ -*-===//
//
// A kernel generator turns one kind of kiln op into target-independent
// linalg on tensors. Targets (codegen/nvptx, codegen/amdgpu, the host) take
// it from there, so no generator knows which chip it runs on.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_KERNELS_KERNELS_H
#define KILN_CODEGEN_KERNELS_KERNELS_H

#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// Conv, Gemm and MatMul as linalg contractions.
void populateMatmulLikeKernels(mlir::RewritePatternSet &patterns);

/// Elementwise ops (with broadcasting), casts, Expand and BatchNormalization
/// as linalg.generic.
void populateElementwiseKernels(mlir::RewritePatternSet &patterns);

/// Reductions, Softmax, LayerNormalization and pooling.
void populateReductionKernels(mlir::RewritePatternSet &patterns);

/// Reshape, Transpose, Concat, Split, Slice, Gather and Pad.
void populateDataMovementKernels(mlir::RewritePatternSet &patterns);

} // namespace kiln

#endif // KILN_CODEGEN_KERNELS_KERNELS_H
