// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.td - code generation shared by targets ----*- tablegen -*-===//

#ifndef KILN_CODEGEN_COMMON_PASSES_TD
#define KILN_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def Bufferize : Pass<"kiln-bufferize", "mlir::ModuleOp"> {
  let summary = "One-Shot bufferization for kiln's code generators";
  let description = [{
    Bufferizes the whole module, function boundaries included, with
    identity-layout memrefs. Copies are made as `linalg.copy` rather than
    `memref.copy`, so that on GPU targets they become kernels like any other
    linalg op instead of host loops over device memory. Empty tensors that
    a result only fills before it is inserted into a slice (a Concat's
    input) become that slice first, so the result is computed in place
    (a slice's sizes read off the tensor inserted, as sizes a run gives
    are, first become the values its empty tensor was made with),
    and copies of a slice onto itself are erased. A buffer copied whole
    into the start of another (a concatenation concatenated again) becomes
    a view of that start, where nothing else writes those elements, and
    the copy goes; so does a buffer written only by copies that a later
    buffer repeats at the same places (a concatenation of every earlier
    input again), whose repeated copies then go.
  }];
  let dependentDialects = [
    "mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def PlanMemory : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Places every buffer of @main: outputs, one activation arena, one weights block";
  let description = [{
    Runs on bufferized code. Afterwards `@main` takes, in order, its inputs,
    its outputs (written in place), an activation arena, the weights and
    each symbol's value, and allocates nothing:

    - a returned buffer becomes an output argument (a copy is made only
      when the value is an input, a weight or returned twice);
    - every other allocation becomes a `memref.view` into the arena, at an
      offset chosen by first fit over the buffers' live ranges, so buffers
      whose lifetimes do not overlap share memory (a buffer lives until its
      last use, or that of a view or a `kiln.tensor_map` of it);
    - every constant global becomes a `memref.view` into the weights.

    The module records `kiln.arena_bytes`, `kiln.weights_bytes` and
    `kiln.weights` (the offset and value of each weight) for the artifact.
    Offsets are multiples of 64 bytes. Buffers marked `kiln.kept` (values
    one run leaves for the next, `kiln-keep-size-values`) take the bottom
    of the arena, each at its largest size in every run, above a header of
    8 bytes and 8 for each symbol, and share their bytes with no other.

    Symbolic sizes (computed from @main's symbol arguments) are planned at
    the symbols' largest values (`SizeBounds.h`), so that one arena serves
    every run. In a run, each buffer goes just above the buffers placed
    below it that are live at the same time, in the same order: its offset
    is arithmetic on the symbols, computed once at the top of @main, and a
    run of small sizes uses only the start of the arena. A symbolic input
    or output becomes a byte buffer as large as it can be, viewed with the
    run's sizes.

    With `offset-terms`, a run's offset whose expression, written out as a
    tree, would have more terms (symbols and constants) than that is the
    buffer's offset at the largest sizes instead: still above every buffer
    placed below it in any run, as offsets and sizes only grow with the
    symbols. The GPU plans set it, whose launches evaluate each size as a
    program of its own (a chain of concatenations' offsets, each the
    maximum over the buffers below, would otherwise grow exponentially).
  }];
  let options = [
    Option<"offsetTerms", "offset-terms", "int64_t", /*default=*/"0",
           "The most terms a run's offset may have (0: any)">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def DropEmptyBuffers : Pass<"kiln-drop-empty-buffers", "mlir::func::FuncOp"> {
  let summary = "Removes kernels over buffers without elements, and flattens such arguments";
  let description = [{
    A linalg op with a buffer of no elements iterates over nothing: it
    goes. An argument of no elements that nothing uses any more becomes
    `memref<0xT>`: LLVM's lowering cannot describe an identity layout with
    a zero stride (a 3x0x5 buffer), and the runtime passes a pointer all
    the same. The manifest keeps the declared shapes.
  }];
}

def ExpandReshapes : Pass<"kiln-expand-reshapes", "mlir::func::FuncOp"> {
  let summary = "Writes reshapes into several run-time sizes a group as reinterpret casts";
  let description = [{
    MLIR 22's `expand-strided-metadata` takes a `memref.expand_shape`'s
    sizes from its source, which gives one run-time size per group at
    most: a symbolic reshape that makes `batch x seq` rows of `batch * seq`
    ones, or of a flat buffer, would crash it. Each such expand of an
    identity-layout buffer becomes a `memref.reinterpret_cast` with the
    sizes the op names and the contiguous strides they make; one of a
    strided buffer is refused.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
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
    kernels whose results it reads (`after`) and the model inputs, and
    `sizes_only` (true) for a kernel marked `kiln.sizes_only`.
  }];
}

#endif // KILN_CODEGEN_COMMON_PASSES_TD
