//===- Passes.td - kiln's passes ---------------------------*- tablegen -*-===//

#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldBatchNorm : Pass<"kiln-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Folds each BatchNormalization into the Conv or Gemm before it";
  let description = [{
    A `kiln.batch_norm` whose input is a `kiln.conv` used by nothing else,
    with f32 constant weights, bias and statistics, becomes that convolution
    with new constant weights and bias:

    ```mlir
    %c = kiln.conv %x, %w, %b {...}
    %y = kiln.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f32}
    // becomes
    %y = kiln.conv %x, %w2, %b2 {...}   // w2 = w * s, b2 = (b - mean) * s + shift
    ```

    where `s = scale / sqrt(var + epsilon)` per output channel. After a
    `kiln.gemm` the channels are its output columns: B's columns (rows, when
    transposed) are scaled and C becomes `(beta * C - mean) * s + shift`
    with beta 1; C must be absent or a constant that does not vary by row.
    The new op's location fuses both nodes'. An op with other users, or
    non-constant operands, is left alone.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FuseLayerNorm : Pass<"kiln-fuse-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Turns the decomposed LayerNormalization exporters write into kiln.layer_norm";
  let description = [{
    Below opset 17, exporters write LayerNormalization as ReduceMean, Sub,
    Pow (or Mul), ReduceMean, Add, Sqrt, Div, then optionally Mul by gamma
    and Add of beta. Over f32 trailing axes, with a splat constant epsilon
    and exponent 2, such a chain becomes

    ```mlir
    %y = kiln.layer_norm %x, %gamma, %beta {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
    ```

    with the location of every node in it. A chain any of whose values is
    used outside it is left alone, as is an affine step whose operand would
    broadcast over the leading dimensions. Without gamma the scale is ones.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FuseElementwise : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Merges chains of elementwise linalg.generic ops on tensors into one";
  let description = [{
    Runs after `kiln-lower-to-linalg`. An all-parallel `linalg.generic`
    whose result is used only by another all-parallel `linalg.generic` is
    fused into it (MLIR's elementwise fusion): a bias add, a residual add
    and the activation after them become one kernel and one pass over
    memory. Products and reductions are never fused into, and a value with
    another user is never swallowed, so no work is duplicated; a producer
    with loops in its body (pooling, a depthwise convolution) only into a
    consumer that reads each of its elements once.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def FuseGelu : Pass<"kiln-fuse-gelu", "mlir::func::FuncOp"> {
  let summary = "Turns the Erf form of GELU exporters write into kiln.gelu";
  let description = [{
    `x * (Erf(x / sqrt(2)) + 1) * 0.5` (with `x * 0.70710678` for the
    division, and the three factors grouped any way) over f32 becomes

    ```mlir
    %y = kiln.gelu %x : tensor<1x128x3072xf32>
    ```

    with the location of every node in it. A chain any of whose
    intermediate values is used outside it is left alone.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def AssignLayout : Pass<"kiln-assign-layout", "mlir::ModuleOp"> {
  let summary = "Runs convolutions and pooling channels last (NHWC) when asked";
  let description = [{
    With `layout=nhwc`, every `kiln.conv` of one group, every depthwise
    one and every pooling becomes its `channels_last` form between a
    transpose of its input to N x D1..Dk x C and one of its result back; a
    constant weight is transposed at compile time to K1..Kk x C/group x M.
    The transposes then sink
    through elementwise ops of one operand and through Add, Sub, Mul and Div
    of two operands transposed alike, and cancel in pairs (the transpose
    folder), so layout changes remain only at the graph's inputs and outputs
    and around ops without a channels-last form. `layout=nchw` (the host's
    default) changes nothing.
  }];
  let options = [
    Option<"layout", "layout", "std::string", "\"nchw\"", "nchw or nhwc">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def AssignPrecision : Pass<"kiln-assign-precision", "mlir::ModuleOp"> {
  let summary = "Chooses the format each Conv, Gemm and MatMul reads its operands in";
  let description = [{
    Every `kiln.conv`, `kiln.gemm` and `kiln.matmul` of `@main` reads its
    two multiplied operands in `precision` (fp32, tf32, fp16, bf16 or fp8)
    and accumulates in f32, unless `keep-fp32` keeps it: an item that is
    `Conv`, `Gemm` or `MatMul` keeps every op of that type, any other item
    keeps the ops whose ONNX node names contain it. An item that is neither
    one of the three types nor part of any node's name is an error.
    Everything else (bias, softmax, normalization, reductions) stays f32,
    and so do depthwise convolutions (one input channel and one filter per
    group): each output sums one window of one channel, which no
    tensor-core instruction suits.

    A product below f32 gets `kiln.precision`; its constant operands are
    replaced by constants rounded to the format at compile time, its other
    operands go through `kiln.round_to`. For fp8 (E4M3) each operand has a
    per-tensor scale mapping its absolute maximum to 448: a weight's is
    computed here, an activation's comes from `calibration`, a JSON file
    from `kiln calibrate` ({"tensors": {name: absolute maximum}}), looked
    up by the ONNX tensor names the importer records in `kiln.inputs`.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "fp32, tf32, fp16, bf16 or fp8">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "Operator types (Conv, Gemm, MatMul) or parts of node names that stay f32">,
    Option<"calibration", "calibration", "std::string", "\"\"",
           "A kiln calibrate file with the activations' absolute maxima (needed for fp8)">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def LowerToLinalg : Pass<"kiln-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Turns kiln ops into linalg on tensors with the kernel generators";
  let description = [{
    Applies codegen/kernels' generators to every kiln op. An op that no
    generator handles is reported at its location (its ONNX node) and the
    pass fails: nothing is silently left behind.

    ```mlir
    %y = kiln.relu %x : tensor<1x4x6x6xf32>
    // becomes
    %e = tensor.empty() : tensor<1x4x6x6xf32>
    %y = linalg.generic {...} ins(%x : ...) outs(%e : ...) { arith.maximumf ... }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

def Bufferize : Pass<"kiln-bufferize", "mlir::ModuleOp"> {
  let summary = "One-Shot bufferization for kiln's code generators";
  let description = [{
    Bufferizes the whole module, function boundaries included, with
    identity-layout memrefs. Copies are made as `linalg.copy` rather than
    `memref.copy`, so that on GPU targets they become kernels like any other
    linalg op instead of host loops over device memory.
  }];
  let dependentDialects = [
    "mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
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

def PlanMemory : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Places every buffer of @main: outputs, one activation arena, one weights block";
  let description = [{
    Runs on bufferized code. Afterwards `@main` takes, in order, its inputs,
    its outputs (written in place), an activation arena and the weights, and
    allocates nothing:

    - a returned buffer becomes an output argument (a copy is made only
      when the value is an input, a weight or returned twice);
    - every other allocation becomes a `memref.view` into the arena, at an
      offset chosen by first fit over the buffers' live ranges, so buffers
      whose lifetimes do not overlap share memory (a buffer lives until its
      last use, or that of a view or a `kiln.tensor_map` of it);
    - every constant global becomes a `memref.view` into the weights.

    The module records `kiln.arena_bytes`, `kiln.weights_bytes` and
    `kiln.weights` (the offset and value of each weight) for the artifact.
    Offsets are multiples of 64 bytes.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def ListKernels : Pass<"kiln-list-kernels", "mlir::ModuleOp"> {
  let summary = "Records @main's kernels, in order, for the artifact's manifest";
  let description = [{
    Runs on planned buffers (after `kiln-plan-memory`). Every linalg op at
    the top of `@main` is a kernel, and so is every loop nest marked
    `kiln.kernel` (a register-tiled product with what it fused); the
    module's `kiln.kernels` attribute lists them in execution order, each
    with its kind (matmul, elementwise, reduce, pool, gather, copy, fill,
    broadcast, transpose), the format its product reads (`precision`, fp32
    for every kernel without one), the layout of a convolution's or
    pooling's activations (`layout`, nchw or nhwc), the ONNX nodes it came from (its name
    locations), where its result goes (the model output it writes, or its
    byte offset and size in the activation arena) and what it reads: the
    kernels whose results it reads (`after`) and the model inputs.
  }];
}

def WarpRowReductions : Pass<"kiln-warp-row-reductions", "mlir::func::FuncOp"> {
  let summary = "Computes each row's statistics (Softmax, LayerNorm) with a warp per row";
  let description = [{
    Runs on buffers before `kiln-plan-memory`, for NVIDIA GPUs. Each
    all-parallel generic whose body loops over a row (of at least 32
    elements) to reduce it, as the kernel generators write Softmax's and
    LayerNormalization's statistics, becomes a `gpu.launch` of 8 warps a
    block, a warp per row: the lanes split each loop (lane i takes elements
    i, i + 32, ...), then combine their partial results with `gpu.shuffle`
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
    inside (a reduction's) stay loops within the thread.

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

    Fails on anything else at the top of `@main` (work the host would have
    to do between launches) and on launches whose shapes are not constant.
  }];
}

def VectorizeContractions : Pass<"kiln-vectorize-contractions", "mlir::func::FuncOp"> {
  let summary = "Register-tiles and vectorizes f32 contractions on buffers (host)";
  let description = [{
    Finds each f32 `linalg.generic` on buffers that computes
    `C[.., m, n] += A[.. m .. k ..] * B[.. k .., n]`, with one reduction
    dimension `k` and `n` innermost and contiguous in both `C` and `B` (the
    form every Conv, Gemm and MatMul kernel generator emits), and replaces it
    with loops over register tiles: `rows` x 2 vectors of accumulators held
    across the whole reduction, fed by two vector loads of `B` and a
    broadcast of `A` per row (`vector.fma`). Edge tiles have fewer rows and
    masked columns.

    Each column tile, at each index of the other dimensions (batch, groups),
    is one task. The tasks of a product of at least 65536 multiply-adds form
    an `scf.forall` (they write disjoint parts of `C`); smaller products loop
    over them. The loop nest carries `kiln.kernel = "matmul"`.

    Runs on buffers before memory is planned, and joins to each product the
    kernels around it when no value is lost:

    - a zero `linalg.fill` of `C`: the accumulators start at zero;
    - the next kernel, when it is an elementwise generic of arith and math
      ops that reads `C` where the product wrote it, and nothing else reads
      `C`: it runs on the accumulators in registers (its operands read per
      row as broadcast scalars, or along the columns as vectors) and stores
      its own result; `C` is never stored;
    - the all-parallel generic that writes `B` (the im2col gather of a
      convolution), when only the product reads `B` and nothing in between
      writes what the gather reads: each task computes the panel of `B` its
      columns read (`k` x 2 vectors, on its stack) with the gather's body;
      `B` is never stored.

    Anything else (other element types, a transposed `B`, several
    reductions) is left alone for the generic loop lowering.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "256",
           "The width of the target's vector registers: 128, 256 or 512">,
    Option<"fuse", "fuse", "bool", "true",
           "Join the zero fill, the epilogue and the producer of B to each product">
  ];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"
  ];
}

def ParallelizeKernels : Pass<"kiln-parallelize-kernels", "mlir::func::FuncOp"> {
  let summary = "Splits each big kernel on buffers into scf.forall tasks";
  let description = [{
    Tiles every linalg op at the top of the function that runs at least
    65536 iterations along its first dimension larger than 1, when that
    dimension is parallel, into a one-dimensional `scf.forall` of tasks of
    at least 4096 iterations each.
    `kiln-outline-parallel` then hands the tasks to the runtime's threads.
    Products are split by `kiln-vectorize-contractions`, which runs first.
  }];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"
  ];
}

def OutlineParallel : Pass<"kiln-outline-parallel", "mlir::ModuleOp"> {
  let summary = "Turns @main's scf.forall loops into tasks for the host runtime's threads";
  let description = [{
    Gives `@main` a last argument, the runtime's context (`!llvm.ptr`), and
    outlines the body of each top-level one-dimensional `scf.forall` with
    constant bounds into a task function `@main_tasks_<i>(buffers...,
    index)` (task `i` runs the loop's index `lower + i * step`). The loop becomes a
    call to a declaration `@main_tasks_<i>.dispatch(context, buffers...)`
    that carries `kiln.task` (the task function) and `kiln.task_count`; the
    host code generator defines it after lowering to LLVM, as a call to the
    runtime's `parallel_for`.

    Constants and views (`memref.view`, `subview`, `expand_shape`,
    `collapse_shape`) the body uses are cloned into it, so tasks take the
    buffers underneath. A loop whose body still captures anything else than
    identity-layout buffers of static shape is left for `scf-forall-to-for`.
  }];
  let dependentDialects = [
    "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect", "mlir::scf::SCFDialect"
  ];
}

#endif // KILN_PASSES_TD
