// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-elementwise),canonicalize)' | FileCheck %s
// RUN: not kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-elementwise{vector-bits=96}))' 2>&1 | FileCheck %s --check-prefix=BITS

// BITS: kiln-vectorize-elementwise: vector-bits must be 128, 256 or 512, not 96

// A bias added along rows of 20: a loop over the 3 rows, two whole vectors
// of 8 and a masked one of 4. The row's input is a vector load, the bias (one
// per row) a scalar broadcast to every lane.
// CHECK-LABEL: func.func @bias(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x20xf32>, %[[B:[a-z0-9]+]]: memref<3xf32>, %[[Y:[a-z0-9]+]]: memref<3x20xf32>)
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: scf.for %[[J:[a-z0-9]+]] = %{{.+}} to %{{.+}} step %[[C8:[a-z0-9]+]]
// CHECK: %[[V:.+]] = vector.load %[[X]][%[[I]], %[[J]]] : memref<3x20xf32>, vector<8xf32>
// CHECK: %[[S:.+]] = memref.load %[[B]][%[[I]]]
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[V]], %[[SPLAT]] : vector<8xf32>
// CHECK: vector.store %[[SUM]], %[[Y]][%[[I]], %[[J]]]
// CHECK: %[[MASK:.+]] = vector.constant_mask [4] : vector<8xi1>
// CHECK: vector.maskedload %[[X]][%[[I]], %{{.+}}], %[[MASK]]
// CHECK: vector.maskedstore %[[Y]][%[[I]], %{{.+}}], %[[MASK]]
// CHECK-NOT: linalg.generic
func.func @bias(%x: memref<3x20xf32>, %b: memref<3xf32>, %y: memref<3x20xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<3x20xf32>, memref<3xf32>) outs(%y : memref<3x20xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %sum = arith.addf %v, %s : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Left alone: a transpose (the input does not run along the output's
// innermost loop contiguously), and rows shorter than half a vector.
// CHECK-LABEL: func.func @transpose(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @short(
// CHECK: linalg.generic
func.func @transpose(%x: memref<16x16xf32>, %y: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x16xf32>) outs(%y : memref<16x16xf32>) {
  ^bb0(%v: f32, %out: f32):
    linalg.yield %v : f32
  }
  return
}
func.func @short(%x: memref<16x3xf32>, %y: memref<16x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x3xf32>) outs(%y : memref<16x3xf32>) {
  ^bb0(%v: f32, %out: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  return
}

// -----

#rows = affine_map<(i, j) -> (i, j)>

// Extents a run gives: loops to the buffers' sizes, whole vectors along the
// row, then one masked vector of what is left (maybe no lanes).
// CHECK-LABEL: func.func @run_sizes(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x?xf32>, %[[Y:[a-z0-9]+]]: memref<?x?xf32>)
// CHECK-DAG: %[[ROWS:.+]] = memref.dim %[[X]], %c0
// CHECK-DAG: %[[COLUMNS:.+]] = memref.dim %[[X]], %c1
// CHECK: scf.for %[[I:[a-z0-9]+]] = %c0 to %[[ROWS]] step %c1
// CHECK: %[[VECTORS:.+]] = arith.divui %[[COLUMNS]], %c8
// CHECK: %[[WHOLE:.+]] = arith.muli %[[VECTORS]], %c8
// CHECK: scf.for %[[J:[a-z0-9]+]] = %c0 to %[[WHOLE]] step %c8
// CHECK: vector.load %[[X]][%[[I]], %[[J]]]
// CHECK: %[[REST:.+]] = arith.subi %[[COLUMNS]], %[[WHOLE]]
// CHECK: %[[MASK:.+]] = vector.create_mask %[[REST]] : vector<8xi1>
// CHECK: vector.maskedstore %[[Y]][%[[I]], %[[WHOLE]]], %[[MASK]]
func.func @run_sizes(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#rows = affine_map<(i, j) -> (i, j)>

// A value from outside the body (ConstantOfShape's, over sizes a run gives)
// is the same in every lane.
// CHECK-LABEL: func.func @fill(
// CHECK: %[[ONES:.+]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CHECK: vector.store %[[ONES]]
// CHECK: vector.maskedstore %{{.+}}, %{{.+}}, %[[ONES]]
func.func @fill(%y: memref<?x?xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#rows], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<?x?xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  return
}
