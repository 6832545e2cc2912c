// RUN: kiln-opt %s --kiln-bufferize | FileCheck %s

// Function boundaries become identity-layout memrefs, and the copy that
// padding needs is a linalg.copy (a kernel on GPUs), not a memref.copy.
// CHECK-LABEL: func.func @pad(
// CHECK-SAME: %[[X:.+]]: memref<1x3x8x8xf32>) -> memref<1x3x10x10xf32>
// CHECK: %[[BUF:.+]] = memref.alloc() {{.*}}: memref<1x3x10x10xf32>
// CHECK: %[[VIEW:.+]] = memref.subview %[[BUF]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: linalg.copy ins(%[[X]] : memref<1x3x8x8xf32>) outs(%[[VIEW]] :
// CHECK-NOT: memref.copy
// CHECK: return %[[BUF]]
func.func @pad(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  return %0 : tensor<1x3x10x10xf32>
}
