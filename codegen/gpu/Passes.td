// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.td - GPU kernel formation's passes ----------*- tablegen -*-===//

#ifndef KILN_CODEGEN_GPU_PASSES_TD
#define KILN_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def WarpRowReductions : Pass<"kiln-warp-row-reductions", "mlir::func::FuncOp"> {
  let summary = "Computes each row's statistics (Softmax, LayerNorm) with a warp per row";
  let description = [{
    Runs on buffers before `kiln-plan-memory`, for GPUs whose warps
    (NVIDIA, 32 lanes) or wavefronts (AMD, 64: `warp-width=64`) shuffle.
    Each all-parallel generic whose body loops over a row (of at least a
    warp's elements) to reduce it, as the kernel generators write Softmax's
    and LayerNormalization's statistics, becomes a `gpu.launch` of 256
    threads a block, a warp per row: the lanes split each loop (lane i
    takes elements i, i + 32, ...), then combine their partial results with `gpu.shuffle`
    xor butterflies (addf, also for an fma into the sum; maximumf;
    minimumf), so every lane has the row's total for what follows; lane 0
    stores. The launch carries `kiln.kernel = "reduce"`.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel"]} outs(%max : memref<768x1xf32>) {
      %m = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %lowest) -> f32 {
        %x = memref.load %in[%row, %i]
        %n = arith.maximumf %acc, %x : f32
        scf.yield %n : f32
      }
      linalg.yield %m : f32
    }
    ```
    becomes a launch of 96 blocks of 256 threads whose loop runs from the
    lane by 32, followed by five shuffles and maximumf.
  }];
  let options = [
    Option<"warpWidth", "warp-width", "int64_t", "32",
           "Lanes of a warp or wavefront: 32 (NVIDIA) or 64 (AMD)">
  ];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def SharedTransposes : Pass<"kiln-shared-transposes", "mlir::func::FuncOp"> {
  let summary = "Transposes the innermost dimension through shared memory";
  let description = [{
    Runs on buffers before `kiln-plan-memory`, for GPUs, after the products
    took in the transposes they read. Each `linalg.transpose` whose output's
    innermost dimension is another of the input's (both of more than one
    element) becomes a `gpu.launch` of 256 threads a block, a block per
    tile of those two dimensions (32x32, or the dimension's extent when it
    is smaller) and per index of the others. The threads copy the tile
    into shared memory along the input's innermost dimension, meet at a
    barrier, and copy it out along the output's, so both the reads and the
    writes of a warp are contiguous. The tile's rows are padded by one
    element, so reading a column takes 32 banks. The launch carries
    `kiln.kernel = "transpose"`.

    ```mlir
    linalg.transpose ins(%x : memref<1x3x224x224xf32>)
                     outs(%y : memref<1x224x224x3xf32>) permutation = [0, 2, 3, 1]
    ```
    becomes 1568 blocks (224 rows times 7 tiles of 3x32) with a
    `memref<3x33xf32, #gpu.address_space<workgroup>>` tile.
  }];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def InlineScalarOperands : Pass<"kiln-inline-scalar-operands", "mlir::func::FuncOp"> {
  let summary = "Reads one-element tensors built from scalars as those scalars";
  let description = [{
    Runs on linalg on tensors, before bufferization, for GPUs. A
    `tensor.from_elements` of one element that linalg.generic ops read at a
    constant index (a symbol's value as a tensor: a sequence length a mask
    compares positions with) would be a buffer the host writes between
    kernels. Each such generic reads the scalar instead, captured from
    above (it becomes a kernel argument), and the operand goes.

    ```mlir
    %len = tensor.from_elements %n : tensor<1xi64>
    linalg.generic {indexing_maps = [#map, affine_map<(d0) -> (0)>, #map]}
        ins(%x, %len : tensor<?xi64>, tensor<1xi64>) ...
    ```
    becomes a generic of `%x` alone whose body uses `%n`.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def PrepareGpuLoops : Pass<"kiln-prepare-gpu-loops", "mlir::func::FuncOp"> {
  let summary = "Orders linalg loops parallel first, for GPU kernel formation";
  let description = [{
    GPU kernels are formed from a linalg op's outer parallel loops. This
    pass puts each generic op's parallel loops before its reductions (a
    reduction over the leading axis would otherwise become a loop the host
    runs around launches), and puts an op with no parallel loop at all (a
    reduction to one value, an op on 0-d buffers) in an `scf.parallel` of
    one iteration, so it becomes a kernel of one thread.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def MapParallelLoops : Pass<"kiln-map-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Makes each top-level scf.parallel a GPU kernel of 256-thread blocks";
  let description = [{
    Each `scf.parallel` at the top of the function (one per linalg op, from
    `convert-linalg-to-parallel-loops` after `kiln-prepare-gpu-loops`)
    becomes a `gpu.launch` with one thread per iteration: blocks of up to
    256 threads on a 1-D grid, the innermost loop varying fastest across
    threads so that neighbouring threads read neighbouring elements. Loops
    inside (a reduction's) stay loops within the thread. A loop whose upper
    bound a run gives (a symbolic size) takes blocks of 256 threads, as many
    as its iterations need: the grid is computed before the launch and the
    threads past the end do nothing.

    Where the innermost loop allows, a thread takes 4 neighbours along it:
    its trip count a multiple of 4, its index only the last index of loads
    and stores of 32-bit elements whose runs of 4 are 16-byte aligned (the
    dimension contiguous, offset and other strides multiples of 4), and
    everything computed from those loads elementwise. Those loads and
    stores become 16-byte `vector.load` and `vector.store`, the ops between
    them ops on `vector<4x...>`, and values the 4 share are broadcast.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::vector::VectorDialect",
                           "mlir::memref::MemRefDialect"];
}

def SinkIntoLaunches : Pass<"kiln-sink-into-launches", "mlir::func::FuncOp"> {
  let summary = "Moves into each gpu.launch what its kernel can compute itself";
  let description = [{
    Runs before kernel outlining, in place of upstream's
    `gpu-launch-sink-index-computations`. Constants, buffer sizes
    (`memref.dim`), comparisons and selects that a launch's body uses are
    cloned into it (with what they use, recursively), and so are
    conversions of integers to floating point, so the kernel receives the
    integers they start from. Constants then stay constants in the kernels,
    and in a symbolic plan a mean's count, converted to a float, reaches
    the kernel as the integer size the runtime evaluates.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def MergeGpuModules : Pass<"kiln-merge-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Gathers every outlined kernel into one gpu.module";
  let description = [{
    Kernel outlining makes one `gpu.module` per kernel. A target wants one
    code object per architecture (one PTX file, one HSA code object), so this
    pass moves every kernel into a single `gpu.module @kernels`, names each
    kernel after the module it came from, and retargets the launches.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def ListLaunches : Pass<"kiln-list-launches", "mlir::ModuleOp"> {
  let summary = "Records how @main launches each GPU kernel, for the runtime";
  let description = [{
    Runs after kernel outlining on a planned GPU module (after
    `kiln-plan-memory` and `kiln-list-kernels`), whose `@main` does nothing
    but launch kernels on views of its arguments. Each launch becomes a
    `launch` entry of its kernel in the module's `kiln.kernels`: the kernel's
    name, its grid and block sizes, its dynamic shared memory, and each
    argument as the lowered kernel receives it: a buffer as the memory it
    lies in (an input, an output, the arena or the weights), the byte offset
    of its first element there and its descriptor's static offset, sizes and
    strides, and for a `kiln.tensor_map` also the map (dims, strides in
    bytes, box, swizzle) the runtime encodes over that buffer and passes by
    address; a scalar as its width and bits. The runtime builds every
    launch's parameters from these once per session.

    In a symbolic plan, the sizes `@main` computes from its symbol
    arguments (arith and affine.apply on them: a grid over a run's rows, a
    buffer's byte offset or size, a trip count a kernel takes) become
    programs of the symbols (runtime/format/DimProgram.h), which the
    runtime evaluates at each run's values: `grid_programs` (three, for a
    grid with a run-time size, whose `grid` holds 0 there), `programs` of a
    buffer (its byte offset, offset, sizes and strides, where one of them is
    given at run time) and `program` of an integer scalar.

    Fails on anything else at the top of `@main` (work the host would have
    to do between launches), on block and shared memory sizes that are not
    constant, and on sizes computed by ops the programs cannot express.
  }];
}

#endif // KILN_CODEGEN_GPU_PASSES_TD
