// RUN: kiln-opt %s --canonicalize --split-input-file | FileCheck %s
// Folders compute small constant tensors (the shape arithmetic of exported
// models) and leave everything else alone.

// CHECK-LABEL: func.func @arithmetic
// CHECK-DAG: %[[SUM:.+]] = kiln.constant dense<[11, 22, 33]> : tensor<3xi64>
// CHECK-DAG: %[[PRODUCT:.+]] = kiln.constant dense<[2.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[QUOTIENT:.+]] = kiln.constant dense<[-3, 3]> : tensor<2xi64>
// CHECK: return %[[SUM]], %[[PRODUCT]], %[[QUOTIENT]]
func.func @arithmetic() -> (tensor<3xi64>, tensor<2xf32>, tensor<2xi64>) {
  %a = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = kiln.constant dense<10> : tensor<i64>
  %c = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  %0 = kiln.mul %c, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %1 = kiln.add %a, %0 : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %f = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %2 = kiln.pow %f, %two : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %3 = kiln.mul %2, %two : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  // Integer division truncates toward zero.
  %n = kiln.constant dense<[-7, 7]> : tensor<2xi64>
  %d = kiln.constant dense<2> : tensor<2xi64>
  %4 = kiln.div %n, %d : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %1, %3, %4 : tensor<3xi64>, tensor<2xf32>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @division_by_zero
// CHECK: kiln.div
func.func @division_by_zero() -> tensor<2xi64> {
  %n = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %z = kiln.constant dense<[1, 0]> : tensor<2xi64>
  %0 = kiln.div %n, %z : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-DAG: %[[SHAPE:.+]] = kiln.constant dense<[1, 128, 12, 64]> : tensor<4xi64>
// CHECK-DAG: %[[MASK:.+]] = kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[PICK:.+]] = kiln.constant dense<[7, 128]> : tensor<2xi64>
// CHECK-DAG: %[[CAST:.+]] = kiln.constant dense<[1.000000e+00, 1.280000e+02]> : tensor<2xf32>
// CHECK: return %[[SHAPE]], %[[MASK]], %[[PICK]], %[[CAST]]
func.func @shape_arithmetic() -> (tensor<4xi64>, tensor<2xi1>, tensor<2xi64>, tensor<2xf32>) {
  %shape = kiln.constant dense<[1, 128, 768]> : tensor<3xi64>
  %i = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %lead = kiln.gather %shape, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %heads = kiln.constant dense<[12, 64]> : tensor<2xi64>
  %0 = kiln.concat %lead, %heads {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %one = kiln.constant dense<1> : tensor<2xi64>
  %1 = kiln.equal %lead, %one : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %seven = kiln.constant dense<7> : tensor<i64>
  %2 = kiln.where %1, %seven, %lead : (tensor<2xi1>, tensor<i64>, tensor<2xi64>) -> tensor<2xi64>
  %3 = kiln.cast %lead {to = f32} : tensor<2xi64> -> tensor<2xf32>
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<2xi1>, tensor<2xi64>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
// CHECK-DAG: %[[T:.+]] = kiln.constant dense<{{\[\[}}1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<{{\[\[}}6, 4]]> : tensor<1x2xi64>
// CHECK-DAG: %[[E:.+]] = kiln.constant dense<{{\[\[}}1, 2, 3], [4, 5, 6], [1, 2, 3], [4, 5, 6]]> : tensor<4x3xi64>
// CHECK: return %[[T]], %[[R]], %[[S]], %[[E]]
func.func @data_movement() -> (tensor<3x2xi64>, tensor<6xi64>, tensor<1x2xi64>, tensor<4x3xi64>) {
  %x = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xi64>) -> tensor<3x2xi64>
  %1 = kiln.reshape %x {shape = array<i64: 6>} : (tensor<2x3xi64>) -> tensor<6xi64>
  // Row 1, columns 2 and 0, walking backwards.
  %2 = kiln.slice %x {starts = array<i64: 1, 2>, ends = array<i64: 2, -1>, steps = array<i64: 1, -2>}
      : (tensor<2x3xi64>) -> tensor<1x2xi64>
  %3 = kiln.reshape %x {shape = array<i64: 1, 2, 3>} : (tensor<2x3xi64>) -> tensor<1x2x3xi64>
  %4 = kiln.expand %3 {shape = array<i64: 2, 1, 1>} : (tensor<1x2x3xi64>) -> tensor<2x2x3xi64>
  %5 = kiln.reshape %4 {shape = array<i64: 4, 3>} : (tensor<2x2x3xi64>) -> tensor<4x3xi64>
  return %0, %1, %2, %5 : tensor<3x2xi64>, tensor<6xi64>, tensor<1x2xi64>, tensor<4x3xi64>
}

// -----

// Large tensors stay as they are unless they are splats; a splat of any size
// folds cheaply.
// CHECK-LABEL: func.func @sizes
// CHECK-DAG: %[[SPLAT:.+]] = kiln.constant dense<3.000000e+00> : tensor<4096x4096xf32>
// CHECK-DAG: %[[SUM:.+]] = kiln.add
// CHECK: return %[[SUM]], %[[SPLAT]]
func.func @sizes(%arg0: tensor<2048xf32>) -> (tensor<2048xf32>, tensor<4096x4096xf32>) {
  %big = kiln.constant dense_resource<weights> : tensor<2048xf32>
  %0 = kiln.add %big, %big : (tensor<2048xf32>, tensor<2048xf32>) -> tensor<2048xf32>
  %one = kiln.constant dense<1.0> : tensor<4096x4096xf32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %1 = kiln.add %one, %two : (tensor<4096x4096xf32>, tensor<f32>) -> tensor<4096x4096xf32>
  return %0, %1 : tensor<2048xf32>, tensor<4096x4096xf32>
}
{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000"
    }
  }
#-}

// -----

// A slice that reverses a whole dimension keeps its shape but is no identity.
// CHECK-LABEL: func.func @reverse
// CHECK: kiln.slice
func.func @reverse(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.slice %x {starts = array<i64: 3>, ends = array<i64: -1>, steps = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Chains cancel: a reshape of a reshape is one reshape (none when it comes
// back to the input's shape); a transpose of a transpose is one transpose
// of the composed permutation (none when that is the identity). A chain
// whose middle value is used elsewhere keeps that value.
// CHECK-LABEL: func.func @chains
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x3x4xf32>)
// CHECK-DAG: %[[FLAT:.+]] = kiln.reshape %[[X]] {shape = array<i64: 24>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
// CHECK-DAG: %[[T:.+]] = kiln.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-DAG: %[[MID:.+]] = kiln.transpose %[[X]] {perm = array<i64: 1, 0, 2>}
// CHECK-DAG: %[[KEPT:.+]] = kiln.transpose %[[X]] {perm = array<i64: 1, 2, 0>}
// CHECK: return %[[FLAT]], %[[X]], %[[T]], %[[X]], %[[MID]], %[[KEPT]]
func.func @chains(%x: tensor<2x3x4xf32>)
    -> (tensor<24xf32>, tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>, tensor<3x2x4xf32>, tensor<3x4x2xf32>) {
  %0 = kiln.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kiln.reshape %0 {shape = array<i64: 24>} : (tensor<6x4xf32>) -> tensor<24xf32>
  %2 = kiln.reshape %1 {shape = array<i64: 2, 3, 4>} : (tensor<24xf32>) -> tensor<2x3x4xf32>
  %3 = kiln.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %4 = kiln.transpose %3 {perm = array<i64: 1, 2, 0>} : (tensor<2x4x3xf32>) -> tensor<4x3x2xf32>
  %5 = kiln.transpose %3 {perm = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  %6 = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %7 = kiln.transpose %6 {perm = array<i64: 0, 2, 1>} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  return %1, %2, %4, %5, %6, %7 : tensor<24xf32>, tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>, tensor<3x2x4xf32>, tensor<3x4x2xf32>
}

// -----

// A Gemm of a transposed constant B reads the constant transposed at
// compile time; a B that is not constant stays transposed by the Gemm.
// CHECK-LABEL: func.func @gemm_constant_b
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<1x3xf32>, %[[B:[a-z0-9]+]]: tensor<2x3xf32>)
// CHECK: %[[BT:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK: kiln.gemm %[[A]], %[[BT]] {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transA = false, transB = false}
// CHECK: kiln.gemm %[[A]], %[[B]] {{.+}} transB = true}
func.func @gemm_constant_b(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = kiln.gemm %a, %w {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = true}
      : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
  %1 = kiln.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = true}
      : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
  return %0, %1 : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// Comparisons, Min/Max and logic fold on constants, as exporters' mask and
// position-bucket subgraphs need; NaN compares false and wins Min and Max.
// CHECK-LABEL: func.func @comparisons_and_logic
// CHECK-DAG: %[[GT:.+]] = kiln.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[LE:.+]] = kiln.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[NAN:.+]] = kiln.constant dense<false> : tensor<i1>
// CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<[-1, 2, 2]> : tensor<3xi64>
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<0x7FC00000> : tensor<f32>
// The logic chain comes to LE's values, and the two constants are one.
// CHECK: return %[[GT]], %[[LE]], %[[NAN]], %[[MIN]], %[[MAX]], %[[LE]]
func.func @comparisons_and_logic() -> (tensor<3xi1>, tensor<3xi1>, tensor<i1>, tensor<3xi64>, tensor<f32>, tensor<3xi1>) {
  %a = kiln.constant dense<[-1, 2, 3]> : tensor<3xi64>
  %two = kiln.constant dense<2> : tensor<i64>
  %0 = kiln.greater %a, %two : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %1 = kiln.less_or_equal %a, %two : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %nan = kiln.constant dense<0x7FC00000> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %2 = kiln.greater_or_equal %nan, %one : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %3 = kiln.min %a, %two : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %4 = kiln.max %one, %nan : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %5 = kiln.and %0, %1 : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %6 = kiln.xor %5, %1 : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %7 = kiln.not %0 : tensor<3xi1>
  %8 = kiln.or %6, %7 : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2, %3, %4, %8 : tensor<3xi1>, tensor<3xi1>, tensor<i1>, tensor<3xi64>, tensor<f32>, tensor<3xi1>
}

// -----

// Mod takes the divisor's sign unless fmod; a remainder by zero is zero.
// CHECK-LABEL: func.func @remainders
// CHECK-DAG: %[[PY:.+]] = kiln.constant dense<[2, -2, 0, -1]> : tensor<4xi32>
// CHECK-DAG: %[[C:.+]] = kiln.constant dense<[-1, 1, 0, 2]> : tensor<4xi32>
// CHECK-DAG: %[[F:.+]] = kiln.constant dense<[-1.500000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK: return %[[PY]], %[[C]], %[[F]]
func.func @remainders() -> (tensor<4xi32>, tensor<4xi32>, tensor<2xf32>) {
  %x = kiln.constant dense<[-7, 7, 5, 2]> : tensor<4xi32>
  %y = kiln.constant dense<[3, -3, 0, -3]> : tensor<4xi32>
  %0 = kiln.mod %x, %y {fmod = false} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.mod %x, %y {fmod = true} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %f = kiln.constant dense<[-5.5, 3.0]> : tensor<2xf32>
  %g = kiln.constant dense<[2.0, 0.0]> : tensor<2xf32>
  %2 = kiln.mod %f, %g {fmod = true} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<2xf32>
}

// -----

// Float functions and the integer ones fold too (T5's relative-position
// buckets take a log and an absolute value of constant positions).
// CHECK-LABEL: func.func @functions
// CHECK-DAG: %[[LOG:.+]] = kiln.constant dense<[0.000000e+00, 0.99999994]> : tensor<2xf32>
// CHECK-DAG: %[[ROUND:.+]] = kiln.constant dense<[2.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[ABS:.+]] = kiln.constant dense<[3, 0, 4]> : tensor<3xi64>
// CHECK-DAG: %[[SIGN:.+]] = kiln.constant dense<[-1, 0, 1]> : tensor<3xi64>
// CHECK-DAG: %[[INF:.+]] = kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK: return %[[LOG]], %[[ROUND]], %[[ABS]], %[[SIGN]], %[[INF]]
func.func @functions() -> (tensor<2xf32>, tensor<2xf32>, tensor<3xi64>, tensor<3xi64>, tensor<2xi1>) {
  %e = kiln.constant dense<[1.0, 2.71828182845904523536]> : tensor<2xf32>
  %0 = kiln.log %e : tensor<2xf32>
  %h = kiln.constant dense<[2.5, -2.5]> : tensor<2xf32>
  %1 = kiln.round %h : tensor<2xf32>
  %i = kiln.constant dense<[-3, 0, 4]> : tensor<3xi64>
  %2 = kiln.abs %i : tensor<3xi64>
  %3 = kiln.sign %i : tensor<3xi64>
  %inf = kiln.constant dense<[0x7F800000, 0xFF800000]> : tensor<2xf32>
  %4 = kiln.is_inf %inf {detect_positive = false, detect_negative = true} : tensor<2xf32> -> tensor<2xi1>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<3xi64>, tensor<3xi64>, tensor<2xi1>
}
