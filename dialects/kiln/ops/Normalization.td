// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Normalization.td - batch_norm, layer_norm and softmax ---*- tablegen -*-===//
//
// Included by dialects/kiln/KilnOps.td, whose base classes (Kiln_InferredOp,
// Kiln_Tensor, ...) these ops build on; the C++ beside it, ops/Normalization.cpp,
// has their inference, verifiers and folders.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Kiln_BatchNormOp : Kiln_InferredOp<"batch_norm"> {
  let summary = "inference batch normalization over channel dimension 1";
  let description = [{
    ```mlir
    %y = kiln.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f32}
         : (tensor<1x32x112x112xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
         -> tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_FloatTensor:$bias, Kiln_FloatTensor:$mean,
                       Kiln_FloatTensor:$variance, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Kiln_LayerNormOp : Kiln_InferredOp<"layer_norm"> {
  let summary = "normalization over the dimensions from `axis` on";
  let description = [{
    ```mlir
    %y = kiln.layer_norm %x, %gamma, %beta {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
         : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Optional<Kiln_FloatTensor>:$bias, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Kiln_SoftmaxOp : Kiln_SameTypeOp<"softmax"> {
  let summary = "softmax along one axis";
  let description = [{
    ```mlir
    %y = kiln.softmax %x {axis = 3 : i64} : tensor<1x12x128x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}
