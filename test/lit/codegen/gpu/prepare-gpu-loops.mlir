// RUN: kiln-opt %s --split-input-file --kiln-prepare-gpu-loops | FileCheck %s

// A reduction over the leading axis: its parallel loop comes first, so it
// becomes the kernel's threads.
#in = affine_map<(r, p) -> (r, p)>
#out = affine_map<(r, p) -> (p)>
// CHECK-DAG: [[IN:#.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: [[OUT:#.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sums
// CHECK: linalg.generic {indexing_maps = [[[IN]], [[OUT]]], iterator_types = ["parallel", "reduction"]}
func.func @column_sums(%in: memref<4x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<4x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A reduction to one value has no parallel loop: it runs in a parallel
// loop of one iteration, a kernel of one thread.
#all = affine_map<(r) -> (r)>
#one = affine_map<(r) -> ()>
// CHECK-LABEL: func.func @total
// CHECK-DAG: [[ZERO:%.+]] = arith.constant 0 : index
// CHECK-DAG: [[ONE:%.+]] = arith.constant 1 : index
// CHECK: scf.parallel ({{%.+}}) = ([[ZERO]]) to ([[ONE]]) step ([[ONE]])
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
func.func @total(%in: memref<8xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [#all, #one], iterator_types = ["reduction"]}
      ins(%in : memref<8xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// An op already in order, with a parallel loop, is left alone.
// CHECK-LABEL: func.func @in_order
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @in_order(%in: memref<8xf32>, %out: memref<8xf32>) {
  linalg.copy ins(%in : memref<8xf32>) outs(%out : memref<8xf32>)
  return
}
