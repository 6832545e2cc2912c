// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-layer-norm))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-layer-norm))' --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// The form PyTorch exports below opset 17: nine nodes become one.
// CHECK-LABEL: func.func @bert
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<1x4x8xf32>, %[[G:[a-z0-9]+]]: tensor<8xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-NEXT: return %[[Y]]
// LOC-LABEL: func.func @bert
// LOC: kiln.layer_norm {{.+}} loc(#[[FUSED:.+]])
// LOC: #[[FUSED]] = loc(fused[#{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}])
func.func @bert(%x: tensor<1x4x8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<1x4x8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-12> : tensor<f32>
  %mean = kiln.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32> loc("mean")
  %d = kiln.sub %x, %mean : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32> loc("sub")
  %p = kiln.pow %d, %two : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x4x8xf32> loc("pow")
  %var = kiln.reduce_mean %p {axes = array<i64: 2>, keepdims = true} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32> loc("var")
  %e = kiln.add %var, %eps : (tensor<1x4x1xf32>, tensor<f32>) -> tensor<1x4x1xf32> loc("add")
  %s = kiln.sqrt %e : tensor<1x4x1xf32> loc("sqrt")
  %n = kiln.div %d, %s : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32> loc("div")
  %m = kiln.mul %n, %gamma : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32> loc("mul")
  %y = kiln.add %beta, %m : (tensor<8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("add2")
  return %y : tensor<1x4x8xf32>
}

// -----

// The square as d * d, two trailing axes, no affine part: the scale is ones.
// CHECK-LABEL: func.func @plain
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<3x8xf32>
// CHECK: %[[Y:.+]] = kiln.layer_norm %{{.+}}, %[[ONES]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @plain(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %eps = kiln.constant dense<1.0e-5> : tensor<1xf32>
  %mean = kiln.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
  %d = kiln.sub %x, %mean : (tensor<2x3x8xf32>, tensor<2x1x1xf32>) -> tensor<2x3x8xf32>
  %p = kiln.mul %d, %d : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %var = kiln.reduce_mean %p {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
  %e = kiln.add %eps, %var : (tensor<1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %s = kiln.sqrt %e : tensor<2x1x1xf32>
  %n = kiln.div %d, %s : (tensor<2x3x8xf32>, tensor<2x1x1xf32>) -> tensor<2x3x8xf32>
  return %n : tensor<2x3x8xf32>
}

// -----

// A gamma that varies along a leading dimension is no LayerNormalization
// scale: the core fuses, the multiplication stays.
// CHECK-LABEL: func.func @row_scale
// CHECK: %[[N:.+]] = kiln.layer_norm
// CHECK: kiln.mul %[[N]], %{{.+}} : (tensor<1x4x8xf32>, tensor<4x8xf32>)
func.func @row_scale(%x: tensor<1x4x8xf32>, %gamma: tensor<4x8xf32>) -> tensor<1x4x8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-12> : tensor<f32>
  %mean = kiln.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %d = kiln.sub %x, %mean : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %p = kiln.pow %d, %two : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x4x8xf32>
  %var = kiln.reduce_mean %p {axes = array<i64: 2>, keepdims = true} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %e = kiln.add %var, %eps : (tensor<1x4x1xf32>, tensor<f32>) -> tensor<1x4x1xf32>
  %s = kiln.sqrt %e : tensor<1x4x1xf32>
  %n = kiln.div %d, %s : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %m = kiln.mul %n, %gamma : (tensor<1x4x8xf32>, tensor<4x8xf32>) -> tensor<1x4x8xf32>
  return %m : tensor<1x4x8xf32>
}

// -----

// Left alone: a mean used outside the chain (fusing would compute it
// twice), and a reduction over a leading axis.
// CHECK-LABEL: func.func @shared_mean
// CHECK-NOT: kiln.layer_norm
// CHECK: return
func.func @shared_mean(%x: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x1xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-12> : tensor<f32>
  %mean = kiln.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %d = kiln.sub %x, %mean : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %p = kiln.pow %d, %two : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x4x8xf32>
  %var = kiln.reduce_mean %p {axes = array<i64: 2>, keepdims = true} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %e = kiln.add %var, %eps : (tensor<1x4x1xf32>, tensor<f32>) -> tensor<1x4x1xf32>
  %s = kiln.sqrt %e : tensor<1x4x1xf32>
  %n = kiln.div %d, %s : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  return %n, %mean : tensor<1x4x8xf32>, tensor<1x4x1xf32>
}

// CHECK-LABEL: func.func @leading_axis
// CHECK-NOT: kiln.layer_norm
// CHECK: return
func.func @leading_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-12> : tensor<f32>
  %mean = kiln.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d = kiln.sub %x, %mean : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %p = kiln.pow %d, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = kiln.reduce_mean %p {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %e = kiln.add %var, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s = kiln.sqrt %e : tensor<1x8xf32>
  %n = kiln.div %d, %s : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}
