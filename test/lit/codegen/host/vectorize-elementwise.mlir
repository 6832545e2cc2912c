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
