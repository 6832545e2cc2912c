// RUN: kiln-opt %s --split-input-file --kiln-expand-reshapes --verify-diagnostics | FileCheck %s

// Batch x seq rows out of a flat buffer: two run-time sizes in one group
// become a reinterpret cast with the strides the sizes make.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: %[[FLAT:[a-z0-9]+]]: memref<?xf32>, %[[B:[a-z0-9]+]]: index, %[[S:[a-z0-9]+]]: index
// CHECK: %[[STRIDE:.+]] = arith.muli %{{.+}}, %[[S]] : index
// CHECK-NOT: arith.muli
// CHECK: memref.reinterpret_cast %[[FLAT]] to offset: [0], sizes: [%[[B]], %[[S]], 2, 4], strides: [%[[STRIDE]], 8, 4, 1] : memref<?xf32> to memref<?x?x2x4xf32>
// CHECK-NOT: memref.expand_shape
func.func @rows(%flat: memref<?xf32>, %b: index, %s: index) -> memref<?x?x2x4xf32> {
  %e = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [%b, %s, 2, 4] : memref<?xf32> into memref<?x?x2x4xf32>
  return %e : memref<?x?x2x4xf32>
}

// -----

// One run-time size a group stays an expand (expand-strided-metadata takes it).
// CHECK-LABEL: func.func @one
// CHECK: memref.expand_shape
func.func @one(%flat: memref<?xf32>, %b: index) -> memref<?x2x4xf32> {
  %e = memref.expand_shape %flat [[0, 1, 2]] output_shape [%b, 2, 4] : memref<?xf32> into memref<?x2x4xf32>
  return %e : memref<?x2x4xf32>
}

// -----

func.func @strided(%m: memref<?x8xf32, strided<[16, 1]>>, %b: index, %s: index) -> memref<?x?x8xf32, strided<[?, 16, 1]>> {
  // expected-error @+1 {{cannot expand a strided buffer into several run-time sizes a group}}
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 8] : memref<?x8xf32, strided<[16, 1]>> into memref<?x?x8xf32, strided<[?, 16, 1]>>
  return %e : memref<?x?x8xf32, strided<[?, 16, 1]>>
}
