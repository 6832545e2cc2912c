// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.td - the host target's passes ---------------*- tablegen -*-===//

#ifndef KILN_CODEGEN_HOST_PASSES_TD
#define KILN_CODEGEN_HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

def PackWeights : Pass<"kiln-pack-weights", "mlir::func::FuncOp"> {
  let summary = "Packs the constant A and B of f32 products in register-tile order (host)";
  let description = [{
    For each f32 `linalg.generic` on tensors that computes
    `C[.., m, n] += A[.., m, .., k, ..] * B[k, n]` with `B` a constant
    matrix wider than a panel, replaces `B` with the constant
    `B'[ceil(N / P)][K][P]` (zeros past `N`) and reads it as
    `B'[n floordiv P, k, n mod P]`. Each task of the register-tiled product
    then reads a contiguous panel rather than rows `N` floats apart, which
    fall in a few cache sets and evict each other. `P` (`panel-width`) is
    the widest tile of any host level, so that every level reads the same
    packed bytes.

    Else, when `A` is a constant `A[.., m, k]` (a convolution's weights,
    seen through reshapes) of more than `R` rows, replaces it with
    `A'[.., ceil(M / R), K, R]` (zeros past `M`) read as
    `A'[.., m floordiv R, k, m mod R]`: a register tile of rows then reads
    one contiguous stream rather than one a row. `R` (`row-group`) is a
    multiple of every host level's tile rows.
  }];
  let options = [
    Option<"panelWidth", "panel-width", "int64_t", "32",
           "The columns of a panel: a multiple of every host level's tile width">,
    Option<"rowGroup", "row-group", "int64_t", "12",
           "The rows of a group of packed A: a multiple of every host level's tile rows">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect"];
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
    broadcast of `A` per row (`vector.fma`); a reduction of 16 steps or more,
    even, takes two steps an iteration. Edge tiles have fewer rows and
    masked columns. Reads of a packed `B` (kiln-pack-weights) prefetch 16
    steps ahead: weights come from memory once a run holds more of them than
    the caches. When more than one tile of rows reads a task's columns
    of a `B` that is neither packed nor computed per task (an activation,
    whose rows lie far apart), the task first copies them into a panel on
    its stack, rows adjacent.

    Each column tile, at each index of the other dimensions (batch, groups),
    is one task; a product with at least 32 whole tiles of rows and a `B`
    not computed per task splits them into blocks of 4 to 16 tiles that
    divide them, a task per block and column tile, so that a task writes
    rows near one another. The tasks of a product of at least 65536 multiply-adds form
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
      columns read (`k` x 2 vectors, on its stack) with the gather's body,
      a vector of columns at a time (reads gathering), or, for an
      elementwise producer reading inputs (a normalization, an activation,
      a squeeze-excitation's scale), in runs along its innermost dimension
      on vector lanes (its inputs vector loads); `B` is never stored.

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

def VectorizeElementwise : Pass<"kiln-vectorize-elementwise", "mlir::func::FuncOp"> {
  let summary = "Turns elementwise f32 kernels on buffers into vector loops (host)";
  let description = [{
    Replaces each all-parallel f32 `linalg.generic` on buffers whose body is
    elementwise arith and math, whose output runs along its innermost loop
    and whose inputs run along it too (with unit stride) or not at all, and
    whose innermost loop has at least half a vector of iterations, with
    loops over its outer dimensions around a loop of `vector-bits`-wide
    vectors along the innermost one and a masked vector for the rest. An
    input along the innermost loop is a vector load; one not along it is a
    scalar load broadcast to every lane. Runs after
    `kiln-parallelize-kernels`, so the tasks' tiles are vectorized too.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "256",
           "The width of the target's vector registers: 128, 256 or 512">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect"
  ];
}

def VectorizeWindows : Pass<"kiln-vectorize-windows", "mlir::func::FuncOp"> {
  let summary = "Runs window kernels (depthwise convolutions, pooling) on vector lanes (host)";
  let description = [{
    Replaces each all-parallel f32 `linalg.generic` on buffers whose body
    loops over a window (`scf.for` with uniform bounds) and reads with
    `memref.load`, whose operands run along its innermost loop (with unit
    stride) or not at all, and whose innermost loop has at least 4
    iterations, with loops over its outer dimensions around vectors along
    the innermost one: `vector-bits` wide, or the power of two the
    innermost extent fills, and a masked vector for the rest. The window
    loops carry vectors. An index that moves with the lane is kept as a
    scalar base and a constant stride, so a read at it is a vector load (two
    and a shuffle at stride 2); values the same in every lane stay scalars.
    An f32 `arith.select` whose condition differs by lane (a bounds check
    where the window overhangs the input) becomes an `scf.if`: when every
    integer compare it depends on holds for the first and the last active
    lane, it holds for all of them and the select is computed with those
    compares true; otherwise lane by lane, reads gathering. A kernel that
    would gather elsewhere (reads that do not run along the lanes) is left
    alone.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "256",
           "The width of the target's vector registers: 128, 256 or 512">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect"
  ];
}

def VectorizeRowLoops : Pass<"kiln-vectorize-row-loops", "mlir::func::FuncOp"> {
  let summary = "Runs f32 reductions along a row (scf.for with one accumulator) on vectors (host)";
  let description = [{
    Rewrites each `scf.for` from 0 to a constant of at least one vector's
    lanes by 1 that carries one f32 accumulator, combined once per step by
    `arith.addf`, `maximumf`, `maxnumf`, `minimumf` or `minnumf` with a value
    computed by elementwise arith and math from `memref.load`s whose last
    index is the loop's (unit stride) and whose others are defined outside
    it: the rows of Softmax's and LayerNorm's statistics kernels. The lanes
    of `vector-bits`-wide vectors accumulate from the combination's
    identity, a masked vector takes the rest (its lanes off the row
    contribute the identity), and `vector.reduction` combines the lanes with
    the loop's initial value. Sums are reassociated.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "256",
           "The width of the target's vector registers: 128, 256 or 512">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"
  ];
}

def ParallelizeKernels : Pass<"kiln-parallelize-kernels", "mlir::func::FuncOp"> {
  let summary = "Splits each big kernel on buffers into scf.forall tasks";
  let description = [{
    Tiles every linalg op at the top of the function that does at least
    131072 iterations of work (its loops' iterations, each counting the
    constant-bound loops in its body: a row's statistics, a pooling window)
    along its first dimension larger than 1, when that dimension is
    parallel, into a one-dimensional `scf.forall` of tasks of about 16384
    each: the tile nearest above (up to twice) or below (down to half) that
    divides the dimension, so tasks have static shapes, else at least 16384
    with a smaller last task. Smaller kernels run on the calling thread: a
    fork-join costs about what 65536 vectorized elementwise iterations do.
    A kernel whose leading dimensions a run gives (a batch and a sequence)
    over static ones (rows of hidden units) is split along the last of
    them into tasks of at least 65536 iterations, counted at run time: a
    run with less than twice that work is one task, on the calling thread.
    `kiln-outline-parallel` then hands the tasks to the runtime's threads.
    Products are split by `kiln-vectorize-contractions`, which runs first.
  }];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"
  ];
}

def KeepSizeValues : Pass<"kiln-keep-size-values", "mlir::ModuleOp"> {
  let summary = "Marks the kernels that compute from the sizes alone, and the buffers they keep (host)";
  let description = [{
    Runs on buffers, before `kiln-plan-memory`. A kernel of `@main` that
    reads only weights and buffers written only by such kernels computes
    the same values whenever the sizes are the same (relative-position
    buckets, causal masks, position embeddings of a run's sequence): it is
    marked `kiln.sizes_only`. The buffers such kernels write that other
    kernels read (not the model's outputs) are marked `kiln.kept`, up to
    `max-bytes` of them at the symbols' largest values; past that the
    largest is computed in every run, and so are the kernels that write
    it. The symbols their sizes are computed from are marked
    `kiln.kept_sizes` (a relative-position bias depends on the sequence,
    not the batch). `kiln-plan-memory` gives kept buffers bytes of their
    own, and `kiln-skip-kept-kernels` runs the marked kernels only when
    one of those symbols differs from the last run's. A `@main` with an op that touches
    memory and is not a kernel `kiln-list-kernels` lists is left as it is.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"16 << 20",
           "The most bytes kept buffers take at the symbols' largest values">
  ];
}

def SkipKeptKernels : Pass<"kiln-skip-kept-kernels", "mlir::ModuleOp"> {
  let summary = "Runs the kernels of the sizes alone only when a run's sizes change (host)";
  let description = [{
    Runs after `kiln-outline-kernels`, on a `@main` whose kernels
    `kiln-mark-kernel-ends` delimits: kernel i is what lies between the
    hooks of kernels i - 1 and i. The kernels that `kiln.kernels` lists as
    `sizes_only` run inside an `scf.if` on whether this run's symbols
    marked `kiln.kept_sizes` differ from those the arena's header holds
    (`kiln-plan-memory` reserves it below the kept buffers: a flag, then a
    slot for each symbol's value, as i64), or
    no run has written it yet (the runtime maps the arena zeroed); a run
    that computes them writes the header at its end. A kernel's ops with
    results (views, sizes) stay outside; when one touches memory, nothing
    is skipped.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"
  ];
}

def MarkKernelEnds : Pass<"kiln-mark-kernel-ends", "mlir::ModuleOp"> {
  let summary = "Calls a runtime hook after each kernel of @main, for the host profile";
  let description = [{
    Declares `@kiln_kernel_end(i64)`, marked `kiln.runtime_hook`, and calls
    it after each op at the top of `@main` that `kiln-list-kernels` lists as
    a kernel, with the kernel's index in that list. The host code generator
    defines the hook after lowering: it calls the context's `kernel_end`
    when the runtime set one, which is how a profiling session times each
    kernel, and does nothing else.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect"];
}

def ApproximateMath : Pass<"kiln-approximate-math", "mlir::ModuleOp"> {
  let summary = "Computes f32 exp, log, tanh and erf as inline polynomials (host)";
  let description = [{
    Replaces `math.exp`, `expm1`, `log`, `log1p`, `log2`, `tanh` and `erf`
    on f32 scalars and vectors with MLIR's polynomial approximations
    (arithmetic only, within a few units in the last place), which LLVM
    would otherwise lower to one libm call per element or lane.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::math::MathDialect", "mlir::vector::VectorDialect"
  ];
}

def RebaseSlices : Pass<"kiln-rebase-slices", "mlir::ModuleOp"> {
  let summary = "Moves a slice's constant offsets into the byte offset of the arena view it slices (host)";
  let description = [{
    Runs before `kiln-outline-parallel`. A `memref.subview` at the top of
    `@main` of an identity-layout `memref.view`, at constant offsets with
    unit strides (a concatenation's input, written in place), becomes a
    subview at offset 0 of the same view moved on by the slice's start in
    bytes, and the slices and reshapes taken of it change their types to
    follow. A slice the change cannot follow to every use (another op with
    a buffer result, a call) stays. The slices of a run's batch, strided,
    are cloned into the kernels that use them when those are outlined:
    their constant offsets would make each layer writing to another place
    of a concatenation a function of its own, where now the place is the
    view's offset, an argument, and the layers merge.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def OutlineKernels : Pass<"kiln-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Moves each kernel left in @main into a function of its own (host)";
  let description = [{
    Runs after `kiln-outline-parallel`. Each op at the top of `@main` that
    holds a region and has no results (a loop nest, a linalg op) becomes a
    private function `@main_kernel(buffers...)`, never inlined (LLVM's
    `noinline`, as `passthrough`), and a
    call to it. Constants and views it uses are cloned into it, as for
    tasks; an op that still captures anything else than identity-layout
    buffers of static shape stays in `@main`. LLVM then optimizes each
    kernel alone, rather than one function holding them all, whose loop
    passes take time that grows faster than its size.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def FuseRows : Pass<"kiln-fuse-rows", "mlir::func::FuncOp"> {
  let summary = "Runs a chain of kernels over rows as one kernel, a block of rows at a time (host)";
  let description = [{
    Runs on buffers, before `kiln-vectorize-contractions`. A chain of
    kernels over the same leading dimensions (batch, heads, rows) becomes
    one `scf.forall`: a task per block of rows of each batch and head runs
    every kernel of the chain on that block, the intermediates in buffers
    of the block's rows on the task's stack, the outside operands sliced
    to the block. Chains are:
    - attention (`kiln.kernel = "attention"`): scores, scale and mask,
      Softmax's statistics and normalization, the product with V;
    - an MLP (`"mlp"`): two products and the activation between them;
    both fused when their largest intermediate takes 1 MiB or more and a
    block reads at most 1 MiB of each outside operand;
    - a normalization (`"normalize"`): row statistics (Softmax's maximum
      and sum, LayerNorm's mean and deviation) and the kernels that use
      them, so that the block's rows are read while in cache.
    A block's intermediates fit in 256 KiB; the kernels' bodies may index
    with their loop indices only intermediates, or outside buffers at their
    own row.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect"];
}

def MergeKernels : Pass<"kiln-merge-kernels", "mlir::ModuleOp"> {
  let summary = "Makes one function of each set of identical kernel functions (host)";
  let description = [{
    Runs after `kiln-outline-kernels`. Private functions with the same type,
    the same attributes but their names, and equivalent bodies (locations
    aside) become one, which every call (and every task dispatch) uses.
    Repeated layers (BERT's encoder layers, a DenseNet block's 3x3
    convolutions) then compile once: kernels take their weights and arena
    views as arguments, so nothing but those arguments tells them apart.
    Merging repeats until nothing changes, since dispatches merge once
    their tasks have.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def OutlineParallel : Pass<"kiln-outline-parallel", "mlir::ModuleOp"> {
  let summary = "Turns @main's scf.forall loops into tasks for the host runtime's threads";
  let description = [{
    Gives `@main` a last argument, the runtime's context (`!llvm.ptr`),
    passes it as a first argument to the runtime hooks (declarations marked
    `kiln.runtime_hook`) `@main` calls, and outlines the body of each top-level one-dimensional `scf.forall` with
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

def LowerToLLVM : Pass<"kiln-lower-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lowers the host code's vector, memref, arith, index, func and cf ops to LLVM in one conversion";
  let description = [{
    Runs after `expand-strided-metadata`, `convert-scf-to-cf` and the math
    conversions. First rewrites, in one greedy walk, what
    `convert-vector-to-llvm` and `arith-expand{include-bf16=true}` rewrite
    before converting: contractions, masks, transposes, broadcasts, gathers
    and rank-1 transfers into vector ops LLVM has, arith ops without an
    LLVM instruction and bf16 conversions into integer and f32 arithmetic.
    Then converts vector, memref, arith, index, func (bare pointers for
    memref arguments), cf and ub ops to the LLVM dialect in one dialect
    conversion, where MLIR's passes would run one each.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // KILN_CODEGEN_HOST_PASSES_TD
