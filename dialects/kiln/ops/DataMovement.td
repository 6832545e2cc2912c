// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- DataMovement.td - reshape, transpose, concat, ..., tensor maps ---*- tablegen -*-===//
//
// Included by dialects/kiln/KilnOps.td, whose base classes (Kiln_InferredOp,
// Kiln_Tensor, ...) these ops build on; the C++ beside it, ops/DataMovement.cpp,
// has their inference, verifiers and folders.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_InferredOp<"reshape"> {
  let summary = "the same elements in a new shape";
  let description = [{
    `shape` is fully resolved (no 0 or -1). ONNX Reshape, Flatten, Squeeze
    and Unsqueeze all import as this op. A symbolic shape is `?` in
    `shape` where `dims` gives the expression.

    ```mlir
    %y = kiln.reshape %x {shape = array<i64: 1, 128, 12, 64>}
         : (tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$shape,
                       OptionalAttr<Kiln_DimsAttr>:$dims);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_InferredOp<"transpose"> {
  let summary = "permutes dimensions: output dim i is input dim perm[i]";
  let description = [{
    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>}
         : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_InferredOp<"concat"> {
  let summary = "joins tensors along an axis";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_SplitOp : Kiln_InferredOp<"split"> {
  let summary = "cuts a tensor along an axis into pieces of the given sizes";
  let description = [{
    ```mlir
    %a, %b = kiln.split %x {axis = 1 : i64, sizes = array<i64: 2, 6>}
         : (tensor<1x8xf32>) -> (tensor<1x2xf32>, tensor<1x6xf32>)
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Kiln_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_SliceOp : Kiln_InferredOp<"slice"> {
  let summary = "a strided window, one (start, end, step) per dimension";
  let description = [{
    Bounds are normalized: every dimension has an entry, starts and ends are
    clamped into the dimension and steps are non-zero, so dimension i of the
    result has max(0, ceil((ends[i] - starts[i]) / steps[i])) elements. A
    negative step counts down from start to end (end may be -1). Where a
    bound is symbolic (its dimension is), `starts` or `ends` holds `?` and
    `bounds` gives every start, then every end, as expressions; such a
    dimension takes step 1.

    ```mlir
    %y = kiln.slice %x {ends = array<i64: 1, 128>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
         : (tensor<1x512xi64>) -> tensor<1x128xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps,
                       OptionalAttr<Kiln_DimsAttr>:$bounds);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_GatherOp : Kiln_InferredOp<"gather"> {
  let summary = "picks slices of `input` along `axis` by index";
  let description = [{
    Negative indices count from the end of the axis.

    ```mlir
    %y = kiln.gather %table, %ids {axis = 0 : i64}
         : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_GatherElementsOp : Kiln_InferredOp<"gather_elements"> {
  let summary = "reads `input` at `indices` along `axis`, position by position";
  let description = [{
    The result has the indices' shape; element p is `input` at p with its
    `axis` coordinate replaced by `indices[p]`. Every other dimension of
    `indices` is at most the input's. Negative indices count from the end;
    out-of-range ones are clamped.

    ```mlir
    %y = kiln.gather_elements %x, %i {axis = 1 : i64}
         : (tensor<3x3xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_GatherNDOp : Kiln_InferredOp<"gather_nd"> {
  let summary = "reads slices of `input` at index tuples (ONNX GatherND)";
  let description = [{
    The last dimension of `indices` (q) holds tuples addressing the q
    dimensions of `input` after its first `batch_dims`, which `indices`
    shares. The result is indices' shape without its last dimension,
    followed by the input's dimensions after those addressed. Negative
    indices count from the end; out-of-range ones are clamped.

    ```mlir
    %y = kiln.gather_nd %x, %i {batch_dims = 0 : i64}
         : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       I64Attr:$batch_dims);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_ScatterElementsOp : Kiln_InferredOp<"scatter_elements"> {
  let summary = "`data` with `updates` written at `indices` along `axis`";
  let description = [{
    Update p goes to `data`'s position p with its `axis` coordinate
    replaced by `indices[p]`, combined with what is there by `reduction`
    (none, add, mul, max or min; `none` replaces; where several updates meet one position, the last
    wins). Indices are as gather_elements's.

    ```mlir
    %y = kiln.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"}
         : (tensor<3x3xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices, Kiln_Tensor:$updates,
                       I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Kiln_ScatterNDOp : Kiln_InferredOp<"scatter_nd"> {
  let summary = "`data` with slices of `updates` written at index tuples";
  let description = [{
    The last dimension of `indices` (q) holds tuples addressing `data`'s
    first q dimensions; `updates` is indices' shape without its last
    dimension followed by `data`'s dimensions after the q addressed. Each
    slice combines with `data` by `reduction` as scatter_elements's.

    ```mlir
    %y = kiln.scatter_nd %x, %i, %u {reduction = "none"}
         : (tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices, Kiln_Tensor:$updates,
                       StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Kiln_ExpandOp : Kiln_InferredOp<"expand"> {
  let summary = "broadcasts a tensor against `shape` (ONNX Expand)";
  let description = [{
    The result shape is the NumPy broadcast of the input's shape and `shape`
    (`?` where `dims` gives a symbolic entry).

    ```mlir
    %y = kiln.expand %x {shape = array<i64: 4, 128>} : (tensor<1x128xi64>) -> tensor<4x128xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$shape,
                       OptionalAttr<Kiln_DimsAttr>:$dims);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_PadOp : Kiln_InferredOp<"pad"> {
  let summary = "pads (or, with negative pads, crops) every dimension";
  let description = [{
    `pads` holds rank leading pads followed by rank trailing pads.

    ```mlir
    %y = kiln.pad %x {mode = #kiln.pad_mode<constant>, pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f64}
         : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$pads,
                       Kiln_PadModeAttr:$mode, F64Attr:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Kernel arguments (on buffers, after kernel generation)
//===----------------------------------------------------------------------===//

def Kiln_TensorMapOp : Kiln_Op<"tensor_map", [Pure]> {
  let summary = "the device address of a TMA tensor map over a buffer";
  let description = [{
    A GPU kernel that copies tiles of `buffer` into shared memory with the
    Tensor Memory Accelerator (sm_90) takes this address as an argument.
    The map views the buffer as `dims` (innermost first, in elements), the
    elements of dimension i + 1 `strides[i]` elements apart (multiples of
    16 bytes), and copies boxes of `box` elements, their rows swizzled
    within `swizzle` bytes (0, 32, 64 or 128). Elements outside the view
    read as zeros. The runtime encodes the map once the buffer's address is
    known, when a session is created, and passes its address.

    ```mlir
    %map = kiln.tensor_map %a {box = array<i64: 32, 64>, dims = array<i64: 40, 33>,
                               strides = array<i64: 40>, swizzle = 128 : i64} : memref<33x40xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$buffer, DenseI64ArrayAttr:$dims,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$box, I64Attr:$swizzle);
  let results = (outs I64:$map);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}
