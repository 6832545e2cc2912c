// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.td - kiln's graph passes ---------------------*- tablegen -*-===//

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
    consumer that reads each of its elements once. A fused body holds at
    most `max-body-ops` ops, so fusing a long chain costs time linear in
    its length.
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "unsigned", /*default=*/"256",
           "The most ops a fused kernel's body may hold">,
  ];
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
    two multiplied operands in `precision` (fp32, tf32, fp16, bf16, fp8 or
    fp8-fnuz) and accumulates in f32, unless `keep-fp32` keeps it: an item that is
    `Conv`, `Gemm` or `MatMul` keeps every op of that type, any other item
    keeps the ops whose ONNX node names contain it. An item that is neither
    one of the three types nor part of any node's name is an error.
    Everything else (bias, softmax, normalization, reductions) stays f32,
    and so do depthwise convolutions (one input channel and one filter per
    group): each output sums one window of one channel, which no
    tensor-core instruction suits.

    A product below f32 gets `kiln.precision`; its constant operands are
    replaced by constants rounded to the format at compile time, its other
    operands go through `kiln.round_to`. For fp8 (E4M3FN) and fp8-fnuz
    (E4M3FNUZ, AMD's CDNA3) each operand has a per-tensor scale mapping
    its absolute maximum to the format's largest value (448, or 240 for
    fp8-fnuz): a weight's is
    computed here, an activation's comes from `calibration`, a JSON file
    from `kiln calibrate` ({"tensors": {name: absolute maximum}}), looked
    up by the ONNX tensor names the importer records in `kiln.inputs`.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "fp32, tf32, fp16, bf16, fp8 or fp8-fnuz">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "Operator types (Conv, Gemm, MatMul) or parts of node names that stay f32">,
    Option<"calibration", "calibration", "std::string", "\"\"",
           "A kiln calibrate file with the activations' absolute maxima (needed for fp8 and fp8-fnuz)">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

#endif // KILN_PASSES_TD
