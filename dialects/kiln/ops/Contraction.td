// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Contraction.td - conv, gemm and matmul --------------*- tablegen -*-===//
//
// Included by dialects/kiln/KilnOps.td, whose base classes (Kiln_InferredOp,
// Kiln_Tensor, ...) these ops build on; the C++ beside it, ops/Contraction.cpp,
// has their inference, verifiers and folders.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Matmul-like operators
//===----------------------------------------------------------------------===//

def Kiln_ConvOp : Kiln_InferredOp<"conv"> {
  let summary = "N-dimensional grouped convolution in NCHW (or NHWC) order";
  let description = [{
    `input` is N x C x D1..Dk, `weight` is M x C/group x K1..Kk and the
    optional `bias` has M elements. `pads` holds the k leading pads followed by
    the k trailing pads; ONNX's auto_pad is resolved into them on import.
    With `channels_last` (layout assignment's NHWC, for one group or a
    depthwise convolution) `input` is N x D1..Dk x C, `weight` K1..Kk x
    C/group x M and the result N x D1..Dk x M.

    ```mlir
    %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64,
           pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
         : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group,
                       UnitAttr:$channels_last);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// One input channel and one filter per group (MobileNet's depthwise
    /// convolutions): no product, but a window per output.
    bool isDepthwise();
  }];
}

def Kiln_GemmOp : Kiln_InferredOp<"gemm"> {
  let summary = "alpha * op(A) x op(B) + beta * C, with op the optional transpose";
  let description = [{
    ```mlir
    %y = kiln.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = true}
         : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$a, Kiln_FloatTensor:$b,
                       Optional<Kiln_FloatTensor>:$c, F32Attr:$alpha,
                       F32Attr:$beta, BoolAttr:$transA, BoolAttr:$transB);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Kiln_MatMulOp : Kiln_InferredOp<"matmul"> {
  let summary = "NumPy matmul: batched, broadcasting, 1-D operands promoted";
  let description = [{
    ```mlir
    %y = kiln.matmul %a, %b : (tensor<1x128x768xf32>, tensor<768x768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}
