// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-row-loops),canonicalize)' | FileCheck %s

// Softmax's sum of exponentials over a row of 20: lanes accumulate from
// zero over two whole vectors of 8, a masked vector of 4 adds zeros off the
// row, and the lanes' sum joins the loop's initial value.
// CHECK-LABEL: func.func @sum(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x20xf32>, %[[I:[a-z0-9]+]]: index, %[[MAX:[a-z0-9]+]]: f32, %[[INIT:[a-z0-9]+]]: f32)
// CHECK-DAG: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK: %[[LANES:.+]] = scf.for %[[K:[a-z0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[ZEROS]]) -> (vector<8xf32>)
// CHECK: %[[V:.+]] = vector.load %[[X]][%[[I]], %[[K]]] : memref<3x20xf32>, vector<8xf32>
// CHECK: %[[M:.+]] = vector.broadcast %[[MAX]] : f32 to vector<8xf32>
// CHECK: %[[D:.+]] = arith.subf %[[V]], %[[M]] : vector<8xf32>
// CHECK: %[[E:.+]] = math.exp %[[D]] : vector<8xf32>
// CHECK: arith.addf %[[ACC]], %[[E]] : vector<8xf32>
// CHECK: %[[MASK:.+]] = vector.constant_mask [4] : vector<8xi1>
// CHECK: vector.maskedload %[[X]][%[[I]], %{{.+}}], %[[MASK]]
// CHECK: %[[KEPT:.+]] = arith.select %[[MASK]], %{{.+}}, %[[ZEROS]]
// CHECK: %[[ALL:.+]] = arith.addf %[[LANES]], %[[KEPT]]
// CHECK: %[[R:.+]] = vector.reduction <add>, %[[ALL]] : vector<8xf32> into f32
// CHECK: %[[RESULT:.+]] = arith.addf %[[INIT]], %[[R]] : f32
// CHECK: return %[[RESULT]]
func.func @sum(%x: memref<3x20xf32>, %i: index, %max: f32, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %r = scf.for %k = %c0 to %c20 step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %x[%i, %k] : memref<3x20xf32>
    %d = arith.subf %v, %max : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// A maximum starts its lanes at -inf and reduces with <maximumf>.
// CHECK-LABEL: func.func @maximum(
// CHECK: arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.reduction <maximumf>
func.func @maximum(%x: memref<16xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %x[%k] : memref<16xf32>
    %m = arith.maximumf %acc, %v : f32
    scf.yield %m : f32
  }
  return %r : f32
}

// -----

// Left alone: a row shorter than a vector, and a load along another index.
// CHECK-LABEL: func.func @short(
// CHECK: scf.for {{.+}} -> (f32)
// CHECK-LABEL: func.func @column(
// CHECK: scf.for {{.+}} -> (f32)
func.func @short(%x: memref<4xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %x[%k] : memref<4xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %r : f32
}
func.func @column(%x: memref<16x16xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %x[%k, %c0] : memref<16x16xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// A row whose length a run gives (attention's keys): its whole vectors, then
// one masked vector of what is left, which may be no lanes at all.
// CHECK-LABEL: func.func @run_row(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x?xf32>, %[[I:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index, %[[INIT:[a-z0-9]+]]: f32)
// CHECK: %[[VECTORS:.+]] = arith.divui %[[N]], %[[C8:.+]] : index
// CHECK: %[[WHOLE:.+]] = arith.muli %[[VECTORS]], %[[C8]] : index
// CHECK: %[[LANES:.+]] = scf.for %{{.+}} = %{{.+}} to %[[WHOLE]] step %[[C8]] iter_args(
// CHECK: %[[REST:.+]] = arith.subi %[[N]], %[[WHOLE]] : index
// CHECK: %[[MASK:.+]] = vector.create_mask %[[REST]] : vector<8xi1>
// CHECK: vector.maskedload %[[X]][%[[I]], %[[WHOLE]]], %[[MASK]]
// CHECK: vector.reduction <maximumf>
func.func @run_row(%x: memref<?x?xf32>, %i: index, %n: index, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %x[%i, %k] : memref<?x?xf32>
    %m = arith.maximumf %acc, %v : f32
    scf.yield %m : f32
  }
  return %r : f32
}
