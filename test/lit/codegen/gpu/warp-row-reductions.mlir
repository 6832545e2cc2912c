// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-warp-row-reductions))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-warp-row-reductions{warp-width=64}))' | FileCheck %s --check-prefix=WAVE64

#id = affine_map<(d0, d1) -> (d0, d1)>

// LayerNorm's statistics over rows of 768: a warp per row, 8 rows a block.
// Each lane sums every 32nd element, the lanes add their sums with five
// xor shuffles, and every lane has the mean for the second loop, whose
// fma into its carried value is a sum too. Lane 0 stores both results.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<64x768xf32>, %[[MEAN:[a-z0-9]+]]: memref<64x1xf32>, %[[DEV:[a-z0-9]+]]: memref<64x1xf32>)
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.+}}) in (%{{.+}} = %[[C8:.+]], %{{.+}} = %[[C1:.+]], %{{.+}} = %[[C1]]) threads({{.+}}) in (%{{.+}} = %[[C256:.+]], %{{.+}} = %[[C1]], %{{.+}} = %[[C1]])
// CHECK: %[[LANE:.+]] = arith.remui %{{.+}}, %[[C32:.+]] : index
// CHECK: scf.if
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %[[LANE]] to %{{.+}} step %[[STEP:.+]] iter_args
// CHECK: arith.addf
// CHECK: gpu.shuffle  xor %[[SUM]], %{{.+}}, %{{.+}} : f32
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: scf.for %{{.+}} = %[[LANE]] to %{{.+}} step %[[STEP]] iter_args
// CHECK: math.fma
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: math.sqrt
// CHECK: scf.if
// CHECK-DAG: memref.store %{{.+}}, %[[MEAN]]
// CHECK-DAG: memref.store %{{.+}}, %[[DEV]]
// CHECK: kiln.kernel = "reduce"
// On AMD a wavefront of 64 lanes takes a row, 4 rows a block: each lane
// takes every 64th element, and six shuffles of width 64 combine them.
// WAVE64-LABEL: func.func @layer_norm(
// WAVE64: gpu.launch blocks({{.+}}) in (%{{.+}} = %[[C16:.+]], %{{.+}} = %[[C1:.+]], %{{.+}} = %[[C1]]) threads({{.+}}) in (%{{.+}} = %[[C256:.+]], %{{.+}} = %[[C1]], %{{.+}} = %[[C1]])
// WAVE64: %[[C64:.+]] = arith.constant 64 : index
// WAVE64: %[[LANE:.+]] = arith.remui %{{.+}}, %[[C64]] : index
// WAVE64: scf.for %{{.+}} = %[[LANE]] to %{{.+}} step %{{.+}} iter_args
// WAVE64: %[[WIDTH:.+]] = arith.constant 64 : i32
// WAVE64: gpu.shuffle  xor %{{.+}}, %{{.+}}, %[[WIDTH]] : f32
// WAVE64-COUNT-5: gpu.shuffle  xor
// WAVE64: arith.divf
func.func @layer_norm(%x: memref<64x768xf32>, %mean: memref<64x1xf32>, %dev: memref<64x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c768 = arith.constant 768 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 768.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      outs(%mean, %dev : memref<64x1xf32>, memref<64x1xf32>) {
  ^bb0(%o0: f32, %o1: f32):
    %row = linalg.index 0 : index
    %sum = scf.for %i = %c0 to %c768 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %x[%row, %i] : memref<64x768xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    %m = arith.divf %sum, %n : f32
    %squares = scf.for %i = %c0 to %c768 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %x[%row, %i] : memref<64x768xf32>
      %d = arith.subf %v, %m : f32
      %s = math.fma %d, %d, %acc : f32
      scf.yield %s : f32
    }
    %var = arith.divf %squares, %n : f32
    %std = math.sqrt %var : f32
    linalg.yield %m, %std : f32, f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Rows shorter than a warp keep a thread each, and so does a loop that
// carries something it does not combine (here a count of elements over
// zero, a select).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @untouched(%x: memref<4x16xf32>, %y: memref<4x64xf32>, %r: memref<4x1xf32>, %s: memref<4x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%r : memref<4x1xf32>) {
  ^bb0(%o: f32):
    %row = linalg.index 0 : index
    %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %x[%row, %i] : memref<4x16xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%s : memref<4x1xf32>) {
  ^bb0(%o: f32):
    %row = linalg.index 0 : index
    %count = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %y[%row, %i] : memref<4x64xf32>
      %positive = arith.cmpf ogt, %v, %zero : f32
      %more = arith.addf %acc, %one : f32
      %t = arith.select %positive, %more, %acc : f32
      scf.yield %t : f32
    }
    linalg.yield %count : f32
  }
  return
}
