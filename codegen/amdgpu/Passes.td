// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.td - the AMD target's passes ----------------*- tablegen -*-===//

#ifndef KILN_CODEGEN_AMDGPU_PASSES_TD
#define KILN_CODEGEN_AMDGPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MatrixCoreProducts : Pass<"kiln-matrix-core-products", "mlir::func::FuncOp"> {
  let summary = "Turns products into MFMA kernels on AMD's matrix cores";
  let description = [{
    Runs on buffers, for AMD's CDNA GPUs (gfx90a, gfx942), before
    `kiln-plan-memory`. Each contraction (C += A * B over batch, row and
    column loops and one reduction loop, operands in fp32 holding values
    `kiln-assign-precision` rounded) whose `kiln.precision` is fp32, tf32,
    fp16, bf16 or the chip's 8-bit format becomes a `gpu.launch` whose
    wavefronts multiply with `amdgpu.mfma` 16x16 instructions,
    accumulating in fp32:
      - fp32: 16x16x4 f32 (exact fp32 products);
      - tf32: with `xf32` (gfx942), 16x16x8 xf32 (`reducePrecision`, two
        elements a lane); else 16x16x4 f32 on the already rounded values;
      - fp16 and bf16: 16x16x16, four elements a lane (bf16 as gfx90a's
        `_1k` instructions);
      - `fp8` names the 8-bit format the chip's MFMA reads: fp8-fnuz
        (E4M3FNUZ, gfx940 to gfx942) or fp8 (E4M3FN, gfx950). Products in
        it take 16x16x32, eight elements a lane; each operand holds E4M3
        values times its scale (`kiln.scales`), which staging divides out
        and the accumulators multiply back in (they start from C over
        both scales).
    Blocks of 4 wavefronts of 64 lanes compute 64x64 tiles of C, each
    wavefront 32x32 as 2x2 MFMA tiles; a product that would launch fewer
    than 128 such blocks takes 32x32 tiles (each wavefront one MFMA
    tile). The reduction advances 32 at a time: the block's 256 threads
    stage A's and B's tiles in LDS (f32, rows padded by one element so
    that the 16 lanes reading one column hit different banks), each lane
    then reads its fragments as the CDNA ISA lays them out (lane l holds
    row l % 16 and the l / 16-th run of the step's reduction) and
    converts them to the format. C is read first and written once,
    within bounds: lane l holds rows 4 (l / 16) .. 4 (l / 16) + 3 of column
    l % 16 of each MFMA tile.

    The launch takes in the kernels around the product as
    `kiln-tensor-core-products` does (codegen/gpu/ProductFusion.h): the
    writers of A, B and C, computed where their elements are staged, and
    the elementwise epilogue, on the accumulators. It carries
    `kiln.kernel = "matmul"` for `kiln-list-kernels`.

    Products in other formats (an 8-bit one the chip's MFMA does not
    read) keep the scalar kernel.
  }];
  let options = [
    Option<"xf32", "xf32", "bool", "false",
           "Run tf32 products on xf32 MFMA instructions (gfx942)">,
    Option<"fp8", "fp8", "std::string", "\"\"",
           "The 8-bit format the chip's MFMA reads (fp8-fnuz, fp8), if any">
  ];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::amdgpu::AMDGPUDialect", "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect",
    "kiln::KilnDialect"
  ];
}

#endif // KILN_CODEGEN_AMDGPU_PASSES_TD
