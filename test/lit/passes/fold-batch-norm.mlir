// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fold-batch-norm))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fold-batch-norm))' --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// s = scale / sqrt(var + eps) = [2 / sqrt(3 + 1), 3 / sqrt(0 + 1)] = [1, 3].
// The weights of channel c are multiplied by s[c], and the bias becomes
// (b - mean) * s + shift = [(1 - 1) * 1 + 10, (2 - 4) * 3 + 20] = [10, 14].
// Both nodes' locations are kept.
// LOC-LABEL: func.func @fold
// LOC: kiln.conv {{.+}} loc(#[[FUSED:.+]])
// LOC: #[[FUSED]] = loc(fused[#{{.+}}, #{{.+}}])
// CHECK-LABEL: func.func @fold
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x3x3xf32>)
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]], {{\[\[\[}}1.500000e+01, 1.800000e+01], [2.100000e+01, 2.400000e+01]]]]> : tensor<2x1x2x2xf32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<[1.000000e+01, 1.400000e+01]> : tensor<2xf32>
// CHECK: %[[Y:.+]] = kiln.conv %[[X]], %[[W]], %[[B]]
// CHECK-NOT: kiln.batch_norm
// CHECK: return %[[Y]]
func.func @fold(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[5.0, 6.0], [7.0, 8.0]]]]> : tensor<2x1x2x2xf32>
  %b = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %scale = kiln.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %shift = kiln.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %c = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x3x3xf32>, tensor<2x1x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32> loc("/conv/Conv")
  %y = kiln.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0 : f32}
      : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32> loc("/bn/BatchNormalization")
  return %y : tensor<1x2x2x2xf32>
}

// -----

// A convolution without bias gets one: -mean * s + shift.
// CHECK-LABEL: func.func @no_bias
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<[9.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK: kiln.conv %{{.+}}, %{{.+}}, %[[B]]
// CHECK-NOT: kiln.batch_norm
func.func @no_bias(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %w = kiln.constant dense<1.0> : tensor<2x1x2x2xf32>
  %one = kiln.constant dense<1.0> : tensor<2xf32>
  %shift = kiln.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 12.0]> : tensor<2xf32>
  %var = kiln.constant dense<0.0> : tensor<2xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = kiln.batch_norm %c, %one, %shift, %mean, %var {epsilon = 1.0 : f32}
      : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Left alone: a convolution whose result is also used elsewhere (folding
// would change that use), and statistics that are not constants.
// CHECK-LABEL: func.func @shared
// CHECK: %[[C:.+]] = kiln.conv
// CHECK: kiln.batch_norm %[[C]]
// CHECK: return %{{.+}}, %[[C]]
func.func @shared(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = kiln.constant dense<1.0> : tensor<2x1x2x2xf32>
  %p = kiln.constant dense<1.0> : tensor<2xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = kiln.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-5 : f32}
      : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y, %c : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @variable_statistics
// CHECK: kiln.batch_norm
func.func @variable_statistics(%x: tensor<1x1x3x3xf32>, %mean: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %w = kiln.constant dense<1.0> : tensor<2x1x2x2xf32>
  %p = kiln.constant dense<1.0> : tensor<2xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = kiln.batch_norm %c, %p, %p, %mean, %p {epsilon = 1.0e-5 : f32}
      : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// After a Gemm the channels are the output columns. With B transposed
// ([N, K]) row n is scaled by s[n] = [1, 3]; C becomes
// (beta * C - mean) * s + shift = [(2 * 1 - 1) * 1 + 10, (2 * 1 - 4) * 3 + 20]
// = [11, 14], and beta 1.
// CHECK-LABEL: func.func @gemm
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [1.200000e+01, 1.500000e+01, 1.800000e+01]]> : tensor<2x3xf32>
// CHECK-DAG: %[[C:.+]] = kiln.constant dense<[1.100000e+01, 1.400000e+01]> : tensor<2xf32>
// CHECK: kiln.gemm %{{.+}}, %[[B]], %[[C]] {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transA = false, transB = true}
// CHECK-NOT: kiln.batch_norm
func.func @gemm(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %b = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %c = kiln.constant dense<1.0> : tensor<1xf32>
  %scale = kiln.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %shift = kiln.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = kiln.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 2.0 : f32, transA = false, transB = true}
      : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<4x2xf32>
  %z = kiln.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32}
      : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %z : tensor<4x2xf32>
}

// -----

// Without a C, and B not transposed ([K, N]): column n is scaled; C is
// -mean * s + shift.
// CHECK-LABEL: func.func @gemm_plain
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 6.000000e+00], [3.000000e+00, 1.200000e+01]]> : tensor<2x2xf32>
// CHECK-DAG: %[[C:.+]] = kiln.constant dense<[9.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK: kiln.gemm %{{.+}}, %[[B]], %[[C]]
func.func @gemm_plain(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %b = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %scale = kiln.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %shift = kiln.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %var = kiln.constant dense<0.0> : tensor<2xf32>
  %y = kiln.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = false}
      : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %z = kiln.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32}
      : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %z : tensor<4x2xf32>
}

// -----

// A C that varies by row cannot fold.
// CHECK-LABEL: func.func @gemm_row_bias
// CHECK: kiln.batch_norm
func.func @gemm_row_bias(%a: tensor<4x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %b = kiln.constant dense<1.0> : tensor<2x2xf32>
  %p = kiln.constant dense<1.0> : tensor<2xf32>
  %y = kiln.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = false}
      : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %z = kiln.batch_norm %y, %p, %p, %p, %p {epsilon = 1.0e-5 : f32}
      : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %z : tensor<4x2xf32>
}
