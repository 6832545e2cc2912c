// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-tensor-core-products{wgmma=true}))' | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// On sm_90a the block's 4 warps are one warpgroup: wgmma.mma_async
// multiplies the 64x64 tile from shared memory, 4 instructions of k = 8 a
// stage for tf32. The tiles are wgmma's core matrices without swizzling,
// [stage][row / 8][k / 4][row % 8][k % 4]: A's runs along the reduction
// are one 16-byte cp.async each; B's reduction is strided (its columns are
// contiguous), so its elements are copied one by one. The copies are made
// visible to wgmma's async proxy before the barrier, and the group of
// wgmma is waited for before the accumulators go round the loop.
// CHECK-LABEL: func.func @tf32(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<32x16xf32>, %[[W:[a-z0-9]+]]: memref<16x8xf32>
// CHECK: gpu.launch {{.+}} threads({{.+}}) in ({{.+}} = %c128, {{.+}} workgroup(%[[TA:[a-z0-9]+]] : memref<2x8x8x8x4xf32, #gpu.address_space<workgroup>>, %[[TB:[a-z0-9]+]] : memref<2x8x8x8x4xf32, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %[[X]][{{.+}}], %[[TA]][{{.+}}], 4, %{{.+}} :
// CHECK: nvgpu.device_async_copy %[[W]][{{.+}}], %[[TB]][{{.+}}], 1, %{{.+}} :
// CHECK: scf.for
// CHECK: %[[GROUP:.+]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 1 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// The descriptors: the stage's address over 16, then 128 bytes (8 << 16)
// from one core matrix to the next along the reduction, and 1024 (64 <<
// 32) along the rows.
// CHECK: memref.extract_aligned_pointer_as_index %[[TB]]
// CHECK: arith.shrui
// CHECK: %[[STRIDES:.+]] = arith.constant 274878431232 : i64
// CHECK: memref.extract_aligned_pointer_as_index %[[TA]]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 64, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: } {kiln.kernel = "matmul", kiln.precision = "tf32"}
func.func @tf32(%x: memref<32x16xf32>, %w: memref<16x8xf32>, %out: memref<32x8xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<32x16xf32>, memref<16x8xf32>) outs(%out : memref<32x8xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// bf16 tiles hold the format's bits (16 a row of a core matrix), which
// the threads store as they convert: the high half of each f32. With no
// cp.async, nothing is waited for but the fence and the barrier. Two
// wgmma of k = 16 a stage; 512 bytes from one row of core matrices to the
// next (32 << 32).
// CHECK-LABEL: func.func @bf16(
// CHECK: workgroup(%[[TA:[a-z0-9]+]] : memref<2x8x4x8x8xi16, #gpu.address_space<workgroup>>, %[[TB:[a-z0-9]+]] : memref<2x8x4x8x8xi16, #gpu.address_space<workgroup>>)
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: arith.shrui %{{.+}}, %{{.+}} : i32
// CHECK-NEXT: arith.trunci %{{.+}} : i32 to i16
// CHECK-NEXT: memref.store %{{.+}}, %[[TA]]
// CHECK: scf.for
// CHECK-NOT: nvgpu.device_async_wait
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: arith.constant 137439477760 : i64
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @bf16(%x: memref<32x16xf32>, %w: memref<16x8xf32>, %out: memref<32x8xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<32x16xf32>, memref<16x8xf32>) outs(%out : memref<32x8xf32>)
      attrs = {kiln.precision = "bf16"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
