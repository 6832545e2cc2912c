// Symbolic dimensions: `?` in the type, every dimension in its #kiln.dims
// encoding. Inference computes them as expressions, so a round trip
// verifies each op's result against what it infers.
// RUN: kiln-opt %s -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file -canonicalize | FileCheck %s --check-prefix=FOLD

module attributes {kiln.symbols = [#kiln.symbol<"batch", 1, 8, 1>, #kiln.symbol<"seq", 1, 512, 128>]} {
// CHECK-LABEL: func.func @encoder
func.func @encoder(%x: tensor<?x?x768xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 768)>>,
                   %w: tensor<768x768xf32>,
                   %mask: tensor<?x1x1x?xf32, #kiln.dims<()[s0, s1] -> (s0, 1, 1, s1)>>)
    -> tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>> {
  // CHECK: kiln.matmul {{.*}} -> tensor<?x?x768xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 768)>>
  %q = kiln.matmul %x, %w : (tensor<?x?x768xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 768)>>, tensor<768x768xf32>) -> tensor<?x?x768xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 768)>>
  // CHECK: kiln.reshape {{.*}}dims = #kiln.dims<()[s0, s1] -> (s0, s1, 12, 64)>
  %h = kiln.reshape %q {shape = array<i64: -9223372036854775808, -9223372036854775808, 12, 64>, dims = #kiln.dims<()[s0, s1] -> (s0, s1, 12, 64)>} : (tensor<?x?x768xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 768)>>) -> tensor<?x?x12x64xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 12, 64)>>
  // CHECK: kiln.transpose {{.*}} -> tensor<?x12x?x64xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, 64)>>
  %t = kiln.transpose %h {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x12x64xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 12, 64)>>) -> tensor<?x12x?x64xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, 64)>>
  %k = kiln.transpose %h {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x?x12x64xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 12, 64)>>) -> tensor<?x12x64x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, 64, s1)>>
  // CHECK: kiln.matmul {{.*}} -> tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>>
  %s = kiln.matmul %t, %k : (tensor<?x12x?x64xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, 64)>>, tensor<?x12x64x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, 64, s1)>>) -> tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>>
  // Broadcasting the mask's ones against the scores' sizes.
  // CHECK: kiln.add {{.*}} -> tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>>
  %m = kiln.add %s, %mask : (tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>>, tensor<?x1x1x?xf32, #kiln.dims<()[s0, s1] -> (s0, 1, 1, s1)>>) -> tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>>
  %p = kiln.softmax %m {axis = 3 : i64} : tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>>
  return %p : tensor<?x12x?x?xf32, #kiln.dims<()[s0, s1] -> (s0, 12, s1, s1)>>
}
}

// -----

// Flattening multiplies symbols; concatenating adds them; a symbolic slice
// takes its bounds as expressions.
// CHECK-LABEL: func.func @arithmetic
func.func @arithmetic(%x: tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>,
                      %past: tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1 * 3, 4)>>) {
  // CHECK: -> tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>>
  %f = kiln.reshape %x {shape = array<i64: -9223372036854775808, 4>, dims = #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>} : (tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>) -> tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>>
  // CHECK: -> tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1 * 4, 4)>>
  %c = kiln.concat %past, %x {axis = 1 : i64} : (tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1 * 3, 4)>>, tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>) -> tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1 * 4, 4)>>
  // The last position of each sequence: [s1 - 1, s1).
  // CHECK: -> tensor<?x1x4xf32, #kiln.dims<()[s0, s1] -> (s0, 1, 4)>>
  %l = kiln.slice %x {starts = array<i64: 0, -9223372036854775808, 0>, ends = array<i64: -9223372036854775808, -9223372036854775808, 4>, steps = array<i64: 1, 1, 1>, bounds = #kiln.dims<()[s0, s1] -> (0, s1 - 1, 0, s0, s1, 4)>} : (tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>) -> tensor<?x1x4xf32, #kiln.dims<()[s0, s1] -> (s0, 1, 4)>>
  // A constant of positions sliced to the sequence: [0, s1).
  %positions = kiln.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  // CHECK: -> tensor<?xi64, #kiln.dims<()[s0, s1] -> (s1)>>
  %ids = kiln.slice %positions {starts = array<i64: 0>, ends = array<i64: -9223372036854775808>, steps = array<i64: 1>, bounds = #kiln.dims<()[s0, s1] -> (0, s1)>} : (tensor<8xi64>) -> tensor<?xi64, #kiln.dims<()[s0, s1] -> (s1)>>
  return
}

// -----

// Shape arithmetic on kiln.dims values folds into sizes, as it does on
// constants: [s0, s1] gathered, multiplied and concatenated gives the
// shape a reshape reads.
// FOLD-LABEL: func.func @shape_arithmetic
func.func @shape_arithmetic() -> tensor<2xi64> {
  %shape = kiln.dims(#kiln.dims<()[s0, s1] -> (s0, s1, 768)>) : tensor<3xi64>
  %zero = kiln.constant dense<0> : tensor<i64>
  %one = kiln.constant dense<1> : tensor<i64>
  %batch = kiln.gather %shape, %zero {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %seq = kiln.gather %shape, %one {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %rows = kiln.mul %batch, %seq : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %r = kiln.reshape %rows {shape = array<i64: 1>} : (tensor<i64>) -> tensor<1xi64>
  %c = kiln.constant dense<768> : tensor<1xi64>
  %dims = kiln.concat %r, %c {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // FOLD: %[[D:.+]] = kiln.dims(<()[s0, s1] -> (s0 * s1, 768)>) : tensor<2xi64>
  // FOLD: return %[[D]]
  return %dims : tensor<2xi64>
}

// -----

// Sizes divide by positive constants only, as floor divisions.
// FOLD-LABEL: func.func @shape_division
func.func @shape_division() -> tensor<1xi64> {
  %shape = kiln.dims(#kiln.dims<()[s0] -> (s0 * 64)>) : tensor<1xi64>
  %heads = kiln.constant dense<64> : tensor<1xi64>
  %per = kiln.div %shape, %heads : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  // FOLD: kiln.dims(<()[s0] -> (s0)>) : tensor<1xi64>
  return %per : tensor<1xi64>
}
