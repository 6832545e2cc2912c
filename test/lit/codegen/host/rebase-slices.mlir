// RUN: kiln-opt %s --kiln-rebase-slices | FileCheck %s

// The slice at channel 2 of a run's batch of 8-channel 4x4 images starts
// 2 * 16 floats (128 bytes) into its view: it becomes the slice at 0 of a
// view 128 bytes further on, and the image sliced of it and that image
// collapsed follow its new type. A slice at offset 0 stays; so does one
// that a memref.cast (whose type could not follow) takes.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<100000xi8>, %[[N:[a-z0-9]+]]: index, %[[AT:[a-z0-9]+]]: index)
// CHECK: %[[VIEW:.+]] = memref.view %[[ARENA]][%[[AT]]][%[[N]]] : memref<100000xi8> to memref<?x8x4x4xf32>
// CHECK: %[[START:.+]] = arith.constant 128 : index
// CHECK: %[[MOVED_AT:.+]] = arith.addi %[[AT]], %[[START]] : index
// CHECK: %[[MOVED:.+]] = memref.view %[[ARENA]][%[[MOVED_AT]]][%[[N]]] : memref<100000xi8> to memref<?x8x4x4xf32>
// CHECK: %[[SLICE:.+]] = memref.subview %[[MOVED]][0, 0, 0, 0] [%[[N]], 2, 4, 4] [1, 1, 1, 1] : memref<?x8x4x4xf32> to memref<?x2x4x4xf32, strided<[128, 16, 4, 1]>>
// CHECK: %[[IMAGE:.+]] = memref.subview %[[SLICE]][%{{.+}}, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<?x2x4x4xf32, strided<[128, 16, 4, 1]>> to memref<2x4x4xf32, strided<[16, 4, 1], offset: ?>>
// CHECK: memref.collapse_shape %[[IMAGE]]
// CHECK: memref.subview %[[VIEW]][0, 0, 0, 0] [%[[N]], 2, 4, 4]
// CHECK: %[[KEPT:.+]] = memref.subview %[[VIEW]][0, 4, 0, 0] [%[[N]], 2, 4, 4] [1, 1, 1, 1] : memref<?x8x4x4xf32> to memref<?x2x4x4xf32, strided<[128, 16, 4, 1], offset: 64>>
// CHECK: memref.cast %[[KEPT]]
func.func @main(%arena: memref<100000xi8>, %n: index, %at: index) {
  %zero = arith.constant 0.0 : f32
  %view = memref.view %arena[%at][%n] : memref<100000xi8> to memref<?x8x4x4xf32>
  %slice = memref.subview %view[0, 2, 0, 0] [%n, 2, 4, 4] [1, 1, 1, 1] : memref<?x8x4x4xf32> to memref<?x2x4x4xf32, strided<[128, 16, 4, 1], offset: 32>>
  %c0 = arith.constant 0 : index
  %image = memref.subview %slice[%c0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<?x2x4x4xf32, strided<[128, 16, 4, 1], offset: 32>> to memref<2x4x4xf32, strided<[16, 4, 1], offset: ?>>
  %flat = memref.collapse_shape %image [[0], [1, 2]] : memref<2x4x4xf32, strided<[16, 4, 1], offset: ?>> into memref<2x16xf32, strided<[16, 1], offset: ?>>
  memref.store %zero, %flat[%c0, %c0] : memref<2x16xf32, strided<[16, 1], offset: ?>>
  %whole = memref.subview %view[0, 0, 0, 0] [%n, 2, 4, 4] [1, 1, 1, 1] : memref<?x8x4x4xf32> to memref<?x2x4x4xf32, strided<[128, 16, 4, 1]>>
  memref.store %zero, %whole[%c0, %c0, %c0, %c0] : memref<?x2x4x4xf32, strided<[128, 16, 4, 1]>>
  %cast = memref.subview %view[0, 4, 0, 0] [%n, 2, 4, 4] [1, 1, 1, 1] : memref<?x8x4x4xf32> to memref<?x2x4x4xf32, strided<[128, 16, 4, 1], offset: 64>>
  %any = memref.cast %cast : memref<?x2x4x4xf32, strided<[128, 16, 4, 1], offset: 64>> to memref<?x2x4x4xf32, strided<[128, 16, 4, 1], offset: ?>>
  memref.store %zero, %any[%c0, %c0, %c0, %c0] : memref<?x2x4x4xf32, strided<[128, 16, 4, 1], offset: ?>>
  return
}
