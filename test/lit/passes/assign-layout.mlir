// RUN: kiln-opt %s --kiln-assign-layout=layout=nhwc --canonicalize | FileCheck %s
// RUN: kiln-opt %s --kiln-assign-layout=layout=nchw | FileCheck %s --check-prefix=NCHW
// RUN: not kiln-opt %s --kiln-assign-layout=layout=chwn 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: unknown layout 'chwn': expected nchw or nhwc
// NCHW-NOT: channels_last
// NCHW-NOT: kiln.transpose

// A residual block, channels last: the input is transposed once; the
// convolutions read weights transposed at compile time (M x C x KH x KW to
// KH x KW x C x M); Relu, the residual Add, the max pool and the depthwise
// convolution (one channel per group; its weights 1 x 1 x 1 x 2) run on
// NHWC values; one transpose restores NCHW at the end.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>)
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-DAG: %[[XT:.+]] = kiln.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK: %[[C0:.+]] = kiln.conv %[[XT]], %[[W]] {channels_last, {{.+}}} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK: %[[H:.+]] = kiln.relu %[[C0]] : tensor<1x4x4x2xf32>
// CHECK: %[[C1:.+]] = kiln.conv %[[H]], %[[W]] {channels_last,
// CHECK: %[[R1:.+]] = kiln.relu %[[C1]] : tensor<1x4x4x2xf32>
// CHECK: %[[C2:.+]] = kiln.conv %[[R1]], %[[W]] {channels_last,
// CHECK: %[[SUM:.+]] = kiln.add %[[C2]], %[[H]] : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK: %[[R2:.+]] = kiln.relu %[[SUM]]
// CHECK: %[[POOL:.+]] = kiln.max_pool %[[R2]] {ceil_mode = false, channels_last, {{.+}}} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK: %[[DW:.+]] = kiln.conv %[[POOL]], %{{.+}} {channels_last, dilations = array<i64: 1, 1>, group = 2 : i64, {{.+}}} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK: %[[BACK:.+]] = kiln.transpose %[[DW]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK: return %[[BACK]]
func.func @block(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = kiln.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %dw = kiln.constant dense<1.0> : tensor<2x1x1x1xf32>
  %c0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %h = kiln.relu %c0 : tensor<1x2x4x4xf32>
  %0 = kiln.conv %h, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = kiln.relu %0 : tensor<1x2x4x4xf32>
  %2 = kiln.conv %1, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %3 = kiln.add %2, %h : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = kiln.relu %3 : tensor<1x2x4x4xf32>
  %5 = kiln.max_pool %4 {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>,
                         kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %6 = kiln.conv %5, %dw {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  return %6 : tensor<1x2x2x2xf32>
}

// A grouped convolution of two channels per group has no channels-last
// form: it keeps NCHW.
// CHECK-LABEL: func.func @grouped
// CHECK-NOT: kiln.transpose
// CHECK: kiln.conv %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, group = 2 : i64,
// CHECK-NOT: kiln.transpose
func.func @grouped(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = kiln.constant dense<1.0> : tensor<4x2x1x1xf32>
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x4x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
