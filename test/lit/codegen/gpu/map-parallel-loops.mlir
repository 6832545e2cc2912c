// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-gpu-loops,convert-linalg-to-parallel-loops,kiln-map-parallel-loops,canonicalize))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An elementwise kernel takes 4 neighbours a thread along its innermost
// loop: 256 elements are one block of 64 threads; X, the bias and the
// output are read and written 16 aligned bytes at a time, the ops between
// them run on vectors, and the scale, the same for the 4, is loaded once
// and broadcast.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x64xf32>, %[[BIAS:[a-z0-9]+]]: memref<64xf32>, %[[SCALE:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4x64xf32>)
// CHECK: gpu.launch blocks({{.+}}) in ({{.+}} = %c1, {{.+}}) threads(%[[T:[a-z0-9]+]], {{.+}}) in ({{.+}} = %c64, {{.+}})
// CHECK: %[[IN_ROW:.+]] = arith.remui %[[T]], %c16 : index
// CHECK: %[[ROW_OF:.+]] = arith.divui %[[T]], %c16 : index
// CHECK: %[[COLUMN:.+]] = arith.muli %[[IN_ROW]], %c4 : index
// CHECK: %[[ROW:.+]] = arith.remui %[[ROW_OF]], %c4 : index
// CHECK: %[[A:.+]] = vector.load %[[X]][%[[ROW]], %[[COLUMN]]] {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
// CHECK: %[[B:.+]] = vector.load %[[BIAS]][%[[COLUMN]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK: %[[S:.+]] = memref.load %[[SCALE]][%[[ROW]]] : memref<4xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[A]], %[[B]] : vector<4xf32>
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK: %[[SCALED:.+]] = arith.mulf %[[SUM]], %[[SPLAT]] : vector<4xf32>
// CHECK: %[[RELU:.+]] = arith.maximumf %[[SCALED]], %{{.+}} : vector<4xf32>
// CHECK: vector.store %[[RELU]], %[[OUT]][%[[ROW]], %[[COLUMN]]] {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
func.func @elementwise(%x: memref<4x64xf32>, %bias: memref<64xf32>, %scale: memref<4xf32>, %out: memref<4x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #col, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias, %scale : memref<4x64xf32>, memref<64xf32>, memref<4xf32>) outs(%out : memref<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32, %o: f32):
    %sum = arith.addf %a, %b : f32
    %scaled = arith.mulf %sum, %s : f32
    %r = arith.maximumf %scaled, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// An innermost loop of 6 leaves one element a thread.
// CHECK-LABEL: func.func @odd(
// CHECK: gpu.launch {{.+}} threads({{.+}}) in ({{.+}} = %c24,
// CHECK-NOT: vector.
// CHECK: memref.load
// CHECK: arith.negf %{{.+}} : f32
// CHECK: memref.store
func.func @odd(%x: memref<4x6xf32>, %out: memref<4x6xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%out : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// A transpose reads along its innermost loop with a stride: one element a
// thread.
// CHECK-LABEL: func.func @transposed(
// CHECK-NOT: vector.
// CHECK: memref.load
// CHECK: memref.store
func.func @transposed(%x: memref<8x8xf32>, %out: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A view whose rows start 2 elements apart cannot keep runs of 4 aligned.
// CHECK-LABEL: func.func @unaligned(
// CHECK-NOT: vector.
// CHECK: memref.load
func.func @unaligned(%x: memref<4x8xf32, strided<[10, 1], offset: 2>>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32, strided<[10, 1], offset: 2>>) outs(%out : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Rows the run gives: the launch's grid is computed from them before it
// (the runtime evaluates it per run), 256 threads a block, and the threads
// past the end do nothing. The innermost loop, of a known 64, still takes
// 4 neighbours a thread.
// CHECK-LABEL: func.func @run_rows(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x64xf32>
// CHECK: %[[ROWS:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[TOTAL:.+]] = arith.muli %[[ROWS]], %c16
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[TOTAL]], %c256
// CHECK: gpu.launch blocks({{.+}}) in ({{.+}} = %[[BLOCKS]], {{.+}}) threads({{.+}}) in ({{.+}} = %c256,
// CHECK: arith.cmpi ult, %{{.+}}, %[[TOTAL]]
// CHECK: scf.if
// CHECK: vector.load %[[X]]
// CHECK: arith.negf %{{.+}} : vector<4xf32>
func.func @run_rows(%x: memref<?x64xf32>, %out: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%out : memref<?x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  return
}
