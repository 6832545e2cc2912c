// RUN: kiln-opt %s --split-input-file --kiln-lower-to-linalg --kiln-bufferize --kiln-plan-memory --kiln-list-kernels | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-lower-to-linalg --kiln-bufferize --kiln-vectorize-contractions --kiln-plan-memory --kiln-list-kernels | FileCheck %s --check-prefix=FUSED

// Each kernel of @main, in order: its kind, the format its product reads,
// the layout of a convolution's activations, its ONNX node, its
// floating-point operations when it is a product or a depthwise window
// (two a multiply-add: the convolution's 16 outputs take 4 each), where
// its result goes (an arena offset and size, or the model output it writes) and what it reads: the kernels before it whose
// results it reads (after) and the model's inputs. The im2col columns (64
// bytes at 0) are dead once the product has run, so the sum's accumulator
// takes their place.
// CHECK: kiln.kernels = [
// CHECK-SAME: {after = array<i64>, buffer = "arena", bytes = 64 : i64, flops = 0 : i64, inputs = ["x"], kind = "gather", layout = "", node = "/conv/Conv", offset = 0 : i64, precision = "fp32"},
// CHECK-SAME: {after = array<i64>, buffer = "arena", bytes = 64 : i64, flops = 0 : i64, inputs = [], kind = "fill", layout = "", node = "/conv/Conv", offset = 64 : i64, precision = "fp32"},
// CHECK-SAME: {after = array<i64: 0, 1>, buffer = "arena", bytes = 64 : i64, flops = 128 : i64, inputs = ["w"], kind = "matmul", layout = "nchw", node = "/conv/Conv", offset = 64 : i64, precision = "fp32"},
// CHECK-SAME: {after = array<i64>, buffer = "arena", bytes = 4 : i64, flops = 0 : i64, inputs = [], kind = "fill", layout = "", node = "/pool/ReduceSum", offset = 0 : i64, precision = "fp32"},
// CHECK-SAME: {after = array<i64: 2, 3>, buffer = "arena", bytes = 4 : i64, flops = 0 : i64, inputs = [], kind = "reduce", layout = "", node = "/pool/ReduceSum", offset = 0 : i64, precision = "fp32"},
// CHECK-SAME: {after = array<i64: 4>, buffer = "sum", bytes = 4 : i64, flops = 0 : i64, inputs = [], kind = "elementwise", layout = "", node = "/relu/Relu", offset = 0 : i64, precision = "fp32"}]

// A register-tiled product is one kernel (a loop nest marked kiln.kernel)
// that the gather and the zero fill joined; its result is the buffer its
// vector stores write, and it reads what the gather read.
// FUSED: kiln.kernels = [
// FUSED-SAME: {after = array<i64>, buffer = "arena", bytes = 64 : i64, flops = 128 : i64, inputs = ["x", "w"], kind = "matmul", layout = "nchw", node = "/conv/Conv", offset = 0 : i64, precision = "fp32"},
// FUSED-SAME: {after = array<i64>, buffer = "arena", bytes = 4 : i64, flops = 0 : i64, inputs = [], kind = "fill", layout = "", node = "/pool/ReduceSum", offset = 64 : i64, precision = "fp32"},
// FUSED-SAME: {after = array<i64: 0, 1>, buffer = "arena", bytes = 4 : i64, flops = 0 : i64, inputs = [], kind = "reduce", layout = "", node = "/pool/ReduceSum", offset = 64 : i64, precision = "fp32"},
// FUSED-SAME: {after = array<i64: 2>, buffer = "sum", bytes = 4 : i64, flops = 0 : i64, inputs = [], kind = "elementwise", layout = "", node = "/relu/Relu", offset = 0 : i64, precision = "fp32"}]
func.func @main(%x: tensor<1x1x3x3xf32> {kiln.name = "x"}, %w: tensor<4x1x2x2xf32> {kiln.name = "w"})
    -> (tensor<1xf32> {kiln.name = "sum"}) {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x3x3xf32>, tensor<4x1x2x2xf32>) -> tensor<1x4x2x2xf32> loc("/conv/Conv")
  %1 = kiln.reduce_sum %0 {axes = array<i64: 1, 2, 3>, keepdims = false} : (tensor<1x4x2x2xf32>) -> tensor<1xf32> loc("/pool/ReduceSum")
  %2 = kiln.relu %1 : tensor<1xf32> loc("/relu/Relu")
  return %2 : tensor<1xf32>
}

// -----

// A depthwise convolution is a window kernel: two flops for each of the 9
// taps of its 2x4x4 outputs.
// CHECK: kiln.kernels = [
// CHECK-SAME: flops = 576 : i64, inputs = ["x", "w"], kind = "depthwise", layout = "nchw", node = "/dw/Conv"
// FUSED: kiln.kernels = [
// FUSED-SAME: flops = 576 : i64, inputs = ["x", "w"], kind = "depthwise", layout = "nchw", node = "/dw/Conv"
func.func @main(%x: tensor<1x2x4x4xf32> {kiln.name = "x"}, %w: tensor<2x1x3x3xf32> {kiln.name = "w"})
    -> (tensor<1x2x4x4xf32> {kiln.name = "y"}) {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32> loc("/dw/Conv")
  return %0 : tensor<1x2x4x4xf32>
}
