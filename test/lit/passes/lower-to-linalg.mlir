// RUN: kiln-opt %s --kiln-lower-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

// A padded convolution with bias: zero padding, the bias broadcast into the
// accumulator, then the named convolution accumulating onto it.
// CHECK-LABEL: func.func @conv_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PADDED:.+]] = tensor.pad %[[X]] low[0, 0, 1, 2] high[0, 0, 1, 2]
// CHECK:   tensor.yield %[[ZERO]]
// CHECK: } : tensor<1x3x8x8xf32> to tensor<1x3x10x12xf32>
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<1x4x8x5xf32>
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%[[EMPTY]] : tensor<1x4x8x5xf32>) dimensions = [0, 2, 3]
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>} ins(%[[PADDED]], %[[W]] : tensor<1x3x10x12xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x8x5xf32>)
// CHECK: return %[[CONV]]
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x5xf32> {
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 2, 1, 2>, strides = array<i64: 1, 2>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x5xf32>
  return %0 : tensor<1x4x8x5xf32>
}

// -----

// Without bias or padding the accumulator starts at zero.
// CHECK-LABEL: func.func @conv_plain
// CHECK-NOT: tensor.pad
// CHECK: %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x4x6x6xf32>)
// CHECK: linalg.conv_2d_nchw_fchw {{.+}} outs(%[[FILL]] : tensor<1x4x6x6xf32>)
func.func @conv_plain(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Elementwise ops become one linalg.generic each; a broadcast operand reads
// through a map that drops (or pins to 0) its missing dimensions.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:   arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK:   arith.mulf
// CHECK: linalg.generic
// CHECK:   arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK:   arith.maximumf
// CHECK:   arith.minimumf
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.mul %0, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %2 = kiln.relu %1 : tensor<2x3xf32>
  %3 = kiln.clip %2 {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// Weights become arith constants, which bufferization can place in memory.
// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant() -> tensor<2xf32> {
  %0 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// An op without a kernel generator is reported, not left behind: unsigned
// integers have none yet.
func.func @no_generator(%a: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{no kernel generator handles this 'kiln.add' yet}}
  %0 = kiln.add %a, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}
