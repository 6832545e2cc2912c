// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.td - the NVIDIA target's passes -------------*- tablegen -*-===//

#ifndef KILN_CODEGEN_NVPTX_PASSES_TD
#define KILN_CODEGEN_NVPTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def TensorCoreProducts : Pass<"kiln-tensor-core-products", "mlir::func::FuncOp"> {
  let summary = "Turns products that read tf32, fp16, bf16 or fp8 into tensor-core kernels";
  let description = [{
    Runs on buffers, for NVIDIA GPUs of sm_80 and later. Each contraction
    (C += A * B over batch, row and column loops and one reduction loop,
    operands in fp32 holding values `kiln-assign-precision` rounded) whose
    `kiln.precision` is tf32, fp16 or bf16 becomes a `gpu.launch`: blocks of
    4 warps compute 64x64 tiles of C, each warp 32x32 as 2x4 `mma.sync`
    tiles of 16x8 (m16n8k8 for tf32, m16n8k16 for fp16 and bf16),
    accumulating in fp32 registers; a product that would launch fewer than
    128 such blocks takes 32x32 tiles instead (each warp 16x16). The
    reduction advances 32 at a time through a pipeline in shared memory of
    four stages (32x32 tiles) or two (64x64): while the warps multiply one
    stage (each thread reading its fragments as the PTX ISA lays them out),
    the block's 128 threads fetch the next tiles of A and B with
    `cp.async` (`nvgpu.device_async_copy`; zeros past the edges), along the
    reduction or along the rows, whichever the operand has contiguous. C is
    read first and written once, within bounds.

    Runs before `kiln-plan-memory`, and takes in the kernels around the
    product, so that the launch is one pass over memory:
      - the writers of A, B and C (an im2col gather, a rounding, a
        transpose, a fill), and of what those read, when only their reader
        reads what they write: a fill or an elementwise generic with no
        loops in its body. The launch computes each element where it reads
        it, and the buffer is gone. A writer of A (B) is taken in only when
        at most two blocks compute each element (B has at most 128
        columns): beyond that, recomputing costs more than a pass over
        memory;
      - the elementwise generic right after the product that reads C by
        identity (bias, activation, residual, rounding), where C dies: its
        body runs on the accumulators, and its output is stored instead of
        C. The launch takes the epilogue's place.
    The launch carries `kiln.kernel = "matmul"` for `kiln-list-kernels`.

    With `fp8` (sm_89 and later), fp8 products too, as m16n8k32 E4M3
    `mma.sync`: each operand holds E4M3 values times its scale
    (`kiln.scales`), which the kernel divides out as it packs the operands
    and multiplies back into the accumulators.

    With `wgmma` (sm_90a), the block's 4 warps are one warpgroup and
    multiply with `wgmma.mma_async` (m64n64k8 for tf32, k16 for fp16 and
    bf16, k32 for fp8) straight from shared memory: the tiles are laid out
    as the instruction's no-swizzle K-major core matrices (8 rows of 16
    bytes each), in the format itself. 16-bit and fp8 tiles are converted
    by the threads as they store them. A tf32 operand that is copied as it
    is comes through the Tensor Memory Accelerator when its layout allows
    (the reduction contiguous, its rows one stride once flattened, strides
    and offset multiples of 16 bytes): `kiln.tensor_map` before the launch
    gives its map's address, and thread 0 acquires the map
    (`fence.proxy.tensormap`) and starts one
    `cp.async.bulk.tensor` a stage, completing on that stage's mbarrier,
    into tiles swizzled within 128-byte rows that wgmma reads with
    128-byte-swizzle descriptors. Other tf32 tiles arrive by `cp.async` in
    core matrices.

    Other products (fp32; fp8 without `fp8`) keep the scalar kernel.
  }];
  let options = [
    Option<"fp8", "fp8", "bool", "false", "Run fp8 products on tensor cores (sm_89 and later)">,
    Option<"wgmma", "wgmma", "bool", "false",
           "Multiply with wgmma.mma_async from shared memory (sm_90a)">
  ];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect", "mlir::LLVM::LLVMDialect",
    "mlir::nvgpu::NVGPUDialect", "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect", "kiln::KilnDialect"
  ];
}

#endif // KILN_CODEGEN_NVPTX_PASSES_TD
