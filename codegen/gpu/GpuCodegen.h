//===- GpuCodegen.h - from kiln ops to GPU code objects ---------*- C++ -*-===//
//
// GPU code generation in two layers: target-independent kernel formation
// (kernel generators, bufferization, mapping loops onto blocks and threads,
// outlining into one gpu.module), then one lowering per target
// (codegen/nvptx, codegen/amdgpu) that attaches the chip and serializes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_GPU_GPUCODEGEN_H
#define KILN_CODEGEN_GPU_GPUCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace kiln {

/// The tensor-core instructions a target has.
enum class TensorCores {
  None,
  Ampere, ///< sm_80 and later: mma.sync on tf32, fp16 and bf16
  Ada,    ///< sm_89 and later: fp8 (E4M3) too
  Hopper, ///< sm_90a: all four with wgmma.mma_async
};

/// Appends kernel formation for a module of linalg on tensors (the kernel
/// generators' output): its ops become kernels in `gpu.module @kernels`
/// launched from the host function. Products in the formats `tensorCores`
/// takes use its instructions; with `warpRows` (NVIDIA's 32-lane warps), row
/// statistics (Softmax, LayerNorm) take a warp per row.
llvm::LogicalResult buildGpuKernelPipeline(mlir::OpPassManager &pm, TensorCores tensorCores,
                                           bool warpRows, llvm::raw_ostream &errors);

/// The serialized object of the kernel module for one target after a
/// target's lowering has run: PTX text for NVIDIA, AMDGPU assembly for AMD.
/// Reports an error on `module` and fails when there is none.
llvm::FailureOr<std::string> kernelObject(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_CODEGEN_GPU_GPUCODEGEN_H
