// RUN: kiln-opt %s --kiln-sink-into-launches | FileCheck %s

// A kernel computes the sizes of its buffers, its constants and the
// comparisons between them itself, and converts the integers it is given:
// the launch captures the buffer and the integer count, not the values
// derived from them.
// CHECK-LABEL: func.func @sink(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?xf32>, %[[N:[a-z0-9]+]]: index)
// CHECK: %[[COUNT:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK: gpu.launch
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[F:.+]] = arith.sitofp %[[COUNT]] : i64 to f32
// CHECK-DAG: %[[ROWS:.+]] = memref.dim %[[X]], %[[ZERO]] : memref<?xf32>
// CHECK: %[[INSIDE:.+]] = arith.cmpi ult, %{{.+}}, %[[ROWS]] : index
// CHECK: scf.if %[[INSIDE]]
// CHECK: arith.divf %{{.+}}, %[[F]] : f32
func.func @sink(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?xf32>
  %count = arith.index_cast %n : index to i64
  %f = arith.sitofp %count : i64 to f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %inside = arith.cmpi ult, %tx, %rows : index
    scf.if %inside {
      %v = memref.load %x[%tx] : memref<?xf32>
      %d = arith.divf %v, %f : f32
      memref.store %d, %x[%tx] : memref<?xf32>
    }
    gpu.terminator
  }
  return
}
