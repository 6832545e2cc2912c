// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-lower-to-linalg,func.func(kiln-fuse-elementwise))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-lower-to-linalg,func.func(kiln-fuse-elementwise))' --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LOC
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-lower-to-linalg,func.func(kiln-fuse-elementwise{max-body-ops=5}))' | FileCheck %s --check-prefix=CAP

// A residual add and the ReLU after it become one kernel.
// CHECK-LABEL: func.func @residual
// CHECK-COUNT-1: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic
func.func @residual(%x: tensor<1x4x8x8xf32>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = kiln.add %x, %y : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %1 = kiln.relu %0 : tensor<1x4x8x8xf32>
  return %1 : tensor<1x4x8x8xf32>
}

// -----

// A value with another user is not swallowed: the sum is computed once, and
// the ReLU reads it.
// CHECK-LABEL: func.func @shared
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic {{.+}} ins(%[[SUM]] :
// CHECK: arith.maximumf
// CHECK: return %{{.+}}, %[[SUM]]
func.func @shared(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = kiln.add %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = kiln.relu %0 : tensor<8xf32>
  return %1, %0 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Products and reductions are not fused into: the product keeps reading
// the gathered im2col columns, and the ReLU after it stays a kernel of its
// own.
// CHECK-LABEL: func.func @conv_relu
// CHECK: %[[COLUMNS:.+]] = linalg.generic
// CHECK: %[[PRODUCT:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} :
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = kiln.relu %0 : tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}

// -----

// A producer that loops in its body is not fused into a consumer that
// broadcasts it: the softmax's row statistics stay a kernel of their own,
// instead of running again for every element of the normalization.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[STATS:.+]]:2 = linalg.generic
// CHECK: scf.for
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[STATS]]#0, %[[STATS]]#1 :
// CHECK-NOT: scf.for
// CHECK: return
func.func @softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// It is fused where the consumer reads each of its elements once: the
// depthwise convolution's window loops, its bias and its Relu are one
// kernel, which keeps the locations of both nodes and the convolution's
// layout.
// CHECK-LABEL: func.func @depthwise_relu
// CHECK-COUNT-1: linalg.generic
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf %{{.+}}, %in : f32
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic
// LOC-LABEL: func.func @depthwise_relu
// LOC: linalg.generic {{.+}}{kiln.layout = "nhwc"}
// LOC: } -> tensor<1x4x4x2xf32> loc(fused["/conv/Conv", "/relu/Relu"])
func.func @depthwise_relu(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x1x2xf32>, %b: tensor<2xf32>) -> tensor<1x4x4x2xf32> {
  %0 = kiln.conv %x, %w, %b {channels_last, dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x4x4x2xf32>, tensor<3x3x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32> loc("/conv/Conv")
  %1 = kiln.relu %0 : tensor<1x4x4x2xf32> loc("/relu/Relu")
  return %1 : tensor<1x4x4x2xf32>
}

// -----

// A long chain is fused into kernels of at most max-body-ops ops each (a
// Relu's body is its maximumf and the yield): here two Relus a kernel.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CAP-LABEL: func.func @chain
// CAP-COUNT-2: linalg.generic
// CAP-NOT: linalg.generic
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.relu %x : tensor<8xf32>
  %1 = kiln.relu %0 : tensor<8xf32>
  %2 = kiln.relu %1 : tensor<8xf32>
  %3 = kiln.relu %2 : tensor<8xf32>
  return %3 : tensor<8xf32>
}
