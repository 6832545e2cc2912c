// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-parallelize-kernels))' | FileCheck %s

// A big kernel is split along its first dimension larger than 1 into tasks
// of about 16384 iterations, a number of them that divides it: 64 channels
// of 56x56 (3136) need 6 a task and go 8 at a time, every task the same
// static shape.
// CHECK-LABEL: func.func @relu
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<1x64x56x56xf32>, %[[Y:[a-z0-9]+]]: memref<1x64x56x56xf32>)
// CHECK: scf.forall (%[[C:[a-z0-9]+]]) = (0) to (64) step (8) {
// CHECK: %[[IN:.+]] = memref.subview %[[X]][0, %[[C]], 0, 0] [1, 8, 56, 56] [1, 1, 1, 1]
// CHECK: %[[OUT:.+]] = memref.subview %[[Y]][0, %[[C]], 0, 0] [1, 8, 56, 56] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} ins(%[[IN]] : {{.+}}) outs(%[[OUT]] :
// CHECK: arith.maximumf
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @relu(%x: memref<1x64x56x56xf32>, %y: memref<1x64x56x56xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<1x64x56x56xf32>) outs(%y : memref<1x64x56x56xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Rows of 768 need 22 a task; 257 rows have no divisor from 11 to 44, so
// tasks take 22 and the last one 257 - 11 * 22 = 15.
// CHECK-LABEL: func.func @rows
// CHECK: scf.forall (%[[R:[a-z0-9]+]]) = (0) to (257) step (22) {
// CHECK: %[[N:.+]] = affine.min #{{.+}}(%[[R]])
// CHECK: memref.subview %{{.+}}[0, %[[R]], 0] [1, %[[N]], 768] [1, 1, 1]
// CHECK: linalg.fill
func.func @rows(%y: memref<1x257x768xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x257x768xf32>)
  return
}

// -----

// Left alone: small kernels (under 131072 iterations), and kernels whose
// first dimension larger than 1 is a reduction.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.forall
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @left_alone(%small: memref<1x511x256xf32>, %x: memref<1x512x512xf32>, %sums: memref<1x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%small : memref<1x511x256xf32>)
  linalg.generic {indexing_maps = [#id3, #rows], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<1x512x512xf32>) outs(%sums : memref<1x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The loops in a body count: 96 rows of statistics over 2048 elements each
// are 196608 iterations of work, split 8 rows a task.
// CHECK-LABEL: func.func @row_statistics
// CHECK: scf.forall (%{{.+}}) = (0) to (96) step (8) {
#row = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_statistics(%x: memref<96x2048xf32>, %sums: memref<96x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#row], iterator_types = ["parallel", "parallel"]} outs(%sums : memref<96x1xf32>) {
  ^bb0(%out: f32):
    %r = linalg.index 0 : index
    %s = scf.for %k = %c0 to %c2048 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %k] : memref<96x2048xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows a run gives (a batch and a sequence of 768 hidden units): tasks of
// 86 rows of the sequence (65536 iterations' worth), each over the whole
// batch, as many as the run's sequence needs: one, run on the calling
// thread, below two tasks' worth.
// CHECK-LABEL: func.func @run_rows
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<?x?x768xf32>, %{{.+}}: memref<768xf32>, %[[Y:[a-z0-9]+]]: memref<?x?x768xf32>)
// CHECK-DAG: %[[BATCH:.+]] = memref.dim %[[X]], %c0
// CHECK-DAG: %[[SEQUENCE:.+]] = memref.dim %[[X]], %c1
// CHECK: scf.forall (%[[S:[a-z0-9]+]]) = (0) to (%[[SEQUENCE]]) step (86) {
// CHECK: %[[N:.+]] = affine.min #{{.+}}(%[[S]])[%[[SEQUENCE]]]
// CHECK: memref.subview %[[X]][0, %[[S]], 0] [%[[BATCH]], %[[N]], 768] [1, 1, 1]
// CHECK: arith.addf
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>
func.func @run_rows(%x: memref<?x?x768xf32>, %b: memref<768xf32>, %y: memref<?x?x768xf32>) {
  linalg.generic {indexing_maps = [#id3, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<?x?x768xf32>, memref<768xf32>) outs(%y : memref<?x?x768xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Where a row's length is a run's too (attention's keys), what a row costs
// is unknown: the kernel stays whole.
// CHECK-LABEL: func.func @run_columns
// CHECK-NOT: scf.forall
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @run_columns(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}
