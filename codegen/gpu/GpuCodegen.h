// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- GpuCodegen.h - kernel formation shared by the GPU targets -*- C++ -*-===//
//
// GPU code generation in two layers: kernel formation, the same for every
// GPU (bufferization, mapping loops onto blocks and threads, outlining into
// one gpu.module), then each target's own lowering (codegen/nvptx,
// codegen/amdgpu) that attaches the chip and serializes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_GPU_GPUCODEGEN_H
#define KILN_CODEGEN_GPU_GPUCODEGEN_H

#include "codegen/Target.h"

namespace kiln {

/// --emit kernels: the module after kernel formation, which every GPU
/// family writes.
constexpr EmitFormat kKernelsEmitFormat = {
    "kernels", "after GPU kernel formation (gpu.module @kernels)", Stage::Kernels};

/// Appends kernel formation for a module of linalg on tensors (the kernel
/// generators' output): its ops become kernels in `gpu.module @kernels`
/// launched from the host function. `productKernels` adds, to the pass
/// manager of each function, the target's passes that make products
/// kernels of their own (tensor or matrix cores) before the generic
/// mapping; where `features` has a warp width (NVIDIA's 32, AMD's
/// wavefront of 64), row statistics (Softmax, LayerNorm) take a warp a row.
void buildGpuKernelPipeline(mlir::OpPassManager &pm, const TargetFeatures &features,
                            llvm::function_ref<void(mlir::OpPassManager &)> productKernels);

/// The serialized object of the kernel module for one target after a
/// target's lowering has run: PTX text for NVIDIA, AMDGPU assembly for AMD.
/// Reports an error on `module` and fails when there is none.
llvm::FailureOr<std::string> kernelObject(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_CODEGEN_GPU_GPUCODEGEN_H
