// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// Every op parses, verifies and prints back to the same form.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  // CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.sub %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = kiln.mul %1, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = kiln.div %2, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = kiln.pow %3, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.equal {{.*}} -> tensor<2x3xi1>
  %5 = kiln.equal %4, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK: kiln.where
  %6 = kiln.where %5, %4, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.sqrt %{{.*}} : tensor<2x3xf32>
  %7 = kiln.sqrt %6 : tensor<2x3xf32>
  %8 = kiln.exp %7 : tensor<2x3xf32>
  %9 = kiln.erf %8 : tensor<2x3xf32>
  %10 = kiln.tanh %9 : tensor<2x3xf32>
  %11 = kiln.sigmoid %10 : tensor<2x3xf32>
  %12 = kiln.relu %11 : tensor<2x3xf32>
  %h = kiln.hard_swish %12 : tensor<2x3xf32>
  // CHECK: kiln.gelu %{{.*}} : tensor<2x3xf32>
  %g = kiln.gelu %h : tensor<2x3xf32>
  // CHECK: kiln.round_to %{{.*}} {format = "fp8", scale = 1.250000e-01 : f32} : tensor<2x3xf32>
  %13 = kiln.round_to %g {format = "fp8", scale = 0.125 : f32} : tensor<2x3xf32>
  // CHECK: kiln.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32}
  %14 = kiln.leaky_relu %13 {alpha = 0.1 : f32} : tensor<2x3xf32>
  %15 = kiln.hard_sigmoid %14 {alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<2x3xf32>
  // CHECK: kiln.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %16 = kiln.clip %15 {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3xf32>
  // CHECK: kiln.cast %{{.*}} {to = f32} : tensor<2x3xi64> -> tensor<2x3xf32>
  %17 = kiln.cast %i {to = f32} : tensor<2x3xi64> -> tensor<2x3xf32>
  %18 = kiln.add %16, %17 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %18 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @matmul_like
func.func @matmul_like(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
                       %m: tensor<2x5xf32>, %n: tensor<7x5xf32>, %c: tensor<7xf32>,
                       %p: tensor<3x1x4x5xf32>, %q: tensor<2x5x6xf32>)
    -> (tensor<1x4x8x8xf32>, tensor<1x4x3x3xf32>, tensor<2x7xf32>, tensor<3x2x4x6xf32>) {
  // CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: kiln.conv {{.*}} -> tensor<1x4x3x3xf32>
  %1 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  // CHECK: kiln.gemm {{.*}} -> tensor<2x7xf32>
  %2 = kiln.gemm %m, %n, %c {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = true}
      : (tensor<2x5xf32>, tensor<7x5xf32>, tensor<7xf32>) -> tensor<2x7xf32>
  // CHECK: kiln.matmul {{.*}} -> tensor<3x2x4x6xf32>
  %3 = kiln.matmul %p, %q : (tensor<3x1x4x5xf32>, tensor<2x5x6xf32>) -> tensor<3x2x4x6xf32>
  return %0, %1, %2, %3 : tensor<1x4x8x8xf32>, tensor<1x4x3x3xf32>, tensor<2x7xf32>, tensor<3x2x4x6xf32>
}

// CHECK-LABEL: func.func @normalization_and_pooling
func.func @normalization_and_pooling(%x: tensor<1x4x9x9xf32>, %s: tensor<4xf32>, %t: tensor<2x8xf32>, %g: tensor<8xf32>)
    -> (tensor<1x4x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>, tensor<8xf32>, tensor<f32>) {
  %0 = kiln.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-5 : f32}
      : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
  // CHECK: kiln.max_pool {{.*}} -> tensor<1x4x5x5xf32>
  %1 = kiln.max_pool %0 {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>,
                         kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
  // ceil_mode: 9 - 2 = 7 spans 3.5 strides, rounded up to 4, plus one window.
  // CHECK: kiln.average_pool {{.*}} -> tensor<1x4x4x4xf32>
  %2 = kiln.average_pool %0 {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>,
                             kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
  %3 = kiln.global_average_pool %0 : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
  // CHECK: kiln.layer_norm
  %4 = kiln.layer_norm %t, %g, %g {axis = 1 : i64, epsilon = 1.0e-12 : f32}
      : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: kiln.softmax %{{.*}} {axis = 1 : i64} : tensor<2x8xf32>
  %5 = kiln.softmax %4 {axis = 1 : i64} : tensor<2x8xf32>
  %6 = kiln.reduce_mean %5 {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %7 = kiln.reduce_sum %5 {axes = array<i64: 0>, keepdims = false} : (tensor<2x8xf32>) -> tensor<8xf32>
  // CHECK: kiln.reduce_max {{.*}} -> tensor<f32>
  %8 = kiln.reduce_max %5 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x8xf32>) -> tensor<f32>
  return %1, %2, %3, %4, %5, %6, %7, %8 : tensor<1x4x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>, tensor<8xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>, %ids: tensor<5xi64>)
    -> (tensor<6x4xf32>, tensor<4x3x2xf32>, tensor<4x3x4xf32>, tensor<2x1x4xf32>, tensor<2x2x4xf32>,
        tensor<2x2x2xf32>, tensor<5x3x4xf32>, tensor<3x2x3x4xf32>, tensor<2x5x4xf32>) {
  // CHECK: kiln.reshape %{{.*}} {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %0 = kiln.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kiln.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %2 = kiln.concat %x, %x {axis = 0 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<4x3x4xf32>
  // CHECK: kiln.split {{.*}} -> (tensor<2x1x4xf32>, tensor<2x2x4xf32>)
  %3:2 = kiln.split %x {axis = 1 : i64, sizes = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x4xf32>)
  // A reversed slice: rows 2 and 0 of dimension 1, every other column.
  // CHECK: kiln.slice {{.*}} -> tensor<2x2x2xf32>
  %4 = kiln.slice %x {starts = array<i64: 0, 2, 0>, ends = array<i64: 2, -1, 4>, steps = array<i64: 1, -2, 2>}
      : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
  // CHECK: kiln.gather {{.*}} -> tensor<5x3x4xf32>
  %5 = kiln.gather %x, %ids {axis = 0 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<5x3x4xf32>
  %6 = kiln.expand %x {shape = array<i64: 3, 1, 1, 1>} : (tensor<2x3x4xf32>) -> tensor<3x2x3x4xf32>
  // CHECK: kiln.pad %{{.*}} {mode = #kiln.pad_mode<reflect>, pads = array<i64: 0, 1, 0, 0, 1, 0>, value = 0.000000e+00 : f64}
  %7 = kiln.pad %x {mode = #kiln.pad_mode<reflect>, pads = array<i64: 0, 1, 0, 0, 1, 0>, value = 0.0 : f64}
      : (tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  return %0, %1, %2, %3#0, %3#1, %4, %5, %6, %7 : tensor<6x4xf32>, tensor<4x3x2xf32>, tensor<4x3x4xf32>, tensor<2x1x4xf32>, tensor<2x2x4xf32>, tensor<2x2x2xf32>, tensor<5x3x4xf32>, tensor<3x2x3x4xf32>, tensor<2x5x4xf32>
}

// CHECK-LABEL: func.func @constants
func.func @constants() -> tensor<2xi64> {
  // CHECK: kiln.constant dense<[1, 2]> : tensor<2xi64>
  %0 = kiln.constant dense<[1, 2]> : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// Channels last: N x H x W x C activations, K x K x C x M weights.
// CHECK-LABEL: func.func @channels_last
// CHECK: kiln.conv {{.*}}channels_last{{.*}} -> tensor<1x4x4x6xf32>
// CHECK: kiln.max_pool {{.*}}channels_last{{.*}} -> tensor<1x2x2x6xf32>
// CHECK: kiln.global_average_pool {{.*}} {channels_last} : (tensor<1x2x2x6xf32>) -> tensor<1x1x1x6xf32>
func.func @channels_last(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x6xf32>) -> tensor<1x1x1x6xf32> {
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x8x8x3xf32>, tensor<3x3x3x6xf32>) -> tensor<1x4x4x6xf32>
  %1 = kiln.max_pool %0 {ceil_mode = false, channels_last, count_include_pad = false, dilations = array<i64: 1, 1>,
                         kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x4x4x6xf32>) -> tensor<1x2x2x6xf32>
  %2 = kiln.global_average_pool %1 {channels_last} : (tensor<1x2x2x6xf32>) -> tensor<1x1x1x6xf32>
  return %2 : tensor<1x1x1x6xf32>
}

// A tensor map's address, on buffers, after kernel generation.
// CHECK-LABEL: func.func @tensor_map
// CHECK: kiln.tensor_map %{{.+}} {box = array<i64: 32, 64>, dims = array<i64: 40, 33>, strides = array<i64: 40>, swizzle = 128 : i64} : memref<33x40xf32>
func.func @tensor_map(%a: memref<33x40xf32>) -> i64 {
  %0 = kiln.tensor_map %a {box = array<i64: 32, 64>, dims = array<i64: 40, 33>, strides = array<i64: 40>, swizzle = 128 : i64} : memref<33x40xf32>
  return %0 : i64
}
