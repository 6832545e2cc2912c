// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-tensor-core-products{wgmma=true}))' | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// On sm_90a the block's 4 warps are one warpgroup: wgmma.mma_async
// multiplies the 64x64 tile from shared memory, 4 instructions of k = 8 a
// stage for tf32.
// A is contiguous along the reduction, its rows 64 bytes apart, so it
// comes through TMA: its tensor map before the launch (16 x 32, boxes of
// 32 x 64, swizzled within 128 bytes), a tile of bytes with room to start
// its two 8 KiB stages at a multiple of 1024, and an mbarrier a stage.
// B's reduction is strided (its columns are contiguous), so the threads
// copy its elements one by one with cp.async into wgmma's core matrices
// without swizzling, [stage][row / 8][k / 4][row % 8][k % 4].
// CHECK-LABEL: func.func @tf32(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<32x16xf32>, %[[W:[a-z0-9]+]]: memref<16x8xf32>
// CHECK: %[[MAP:.+]] = kiln.tensor_map %[[X]] {box = array<i64: 32, 64>, dims = array<i64: 16, 32>, strides = array<i64: 16>, swizzle = 128 : i64} : memref<32x16xf32>
// CHECK: gpu.launch {{.+}} threads({{.+}}) in ({{.+}} = %c128, {{.+}} workgroup(%[[TA:[a-z0-9]+]] : memref<17392xi8, #gpu.address_space<workgroup>>, %[[TB:[a-z0-9]+]] : memref<2x8x8x8x4xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<2xi64, #gpu.address_space<workgroup>>)
// Thread 0 makes the barriers ready (one arrival each) before any thread
// uses them, and acquires the map the host wrote into global memory.
// CHECK: scf.if
// CHECK-COUNT-2: "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r" %{{.+}}, %c1_i32
// CHECK: "fence.mbarrier_init.release.cluster;"
// CHECK-NEXT: "fence.proxy.tensormap::generic.acquire.sys [$0], 128;", "l" %[[MAP]] : (i64) -> ()
// CHECK: gpu.barrier
// The first stage: thread 0 arms its barrier for A's 8 KiB and starts the
// copy of the box at (k, the block's first row); the threads copy B.
// CHECK: scf.if
// CHECK: "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r" %{{.+}}, %c8192_i32
// CHECK: "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %{{.+}}, %[[MAP]], %{{.+}}, %{{.+}}, %{{.+}} : (i32, i64, i32, i32, i32) -> ()
// CHECK: nvgpu.device_async_copy %[[W]][{{.+}}], %[[TB]][{{.+}}], 1, %{{.+}} :
// In the loop, the next stage the same way; then this stage's copies have
// landed (cp.async's group, TMA's barrier phase), are made visible to
// wgmma's async proxy, and the barrier lets the warpgroup multiply.
// CHECK: scf.for
// CHECK: cp.async.bulk.tensor.2d
// CHECK: %[[GROUP:.+]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 1 : i32}
// CHECK: "{\0A.reg .pred done;\0Await:\0Ambarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\0A@!done bra wait;\0A}"
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// The descriptors. B's: the stage's address over 16, then 128 bytes (8 <<
// 16) from one core matrix to the next along the reduction, and 1024 (64
// << 32) along the rows. A's: the leading dimension unused (1 << 16), 1024
// bytes from 8 rows to the next (64 << 32), 128-byte swizzling (1 << 62).
// CHECK: memref.extract_aligned_pointer_as_index %[[TA]]
// CHECK: arith.constant 4611686293305360384 : i64
// CHECK: memref.extract_aligned_pointer_as_index %[[TB]]
// CHECK: arith.shrui
// CHECK: arith.constant 274878431232 : i64
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 64, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: } {kiln.flops = {{[0-9]+}} : i64, kiln.kernel = "matmul", kiln.precision = "tf32"}
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
// the threads store as they convert: the high half of each f32 (so no
// TMA, which copies bits as they are). With no
// cp.async, nothing is waited for but the fence and the barrier. Two
// wgmma of k = 16 a stage; 512 bytes from one row of core matrices to the
// next (32 << 32).
// CHECK-LABEL: func.func @bf16(
// CHECK-NOT: kiln.tensor_map
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

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A batched A maps as 3 dimensions, innermost first: the reduction, the
// rows, the batch (2560 elements apart); each block copies its batch's box.
// CHECK-LABEL: func.func @tma_batched(
// CHECK: kiln.tensor_map %{{.+}} {box = array<i64: 32, 64, 1>, dims = array<i64: 64, 40, 3>, strides = array<i64: 64, 2560>, swizzle = 128 : i64} : memref<3x40x64xf32>
// CHECK: "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];", "r,l,r,r,r,r"
func.func @tma_batched(%x: memref<3x40x64xf32>, %w: memref<3x64x72xf32>, %out: memref<3x40x72xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x40x64xf32>, memref<3x64x72xf32>) outs(%out : memref<3x40x72xf32>)
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
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// TMA needs rows a multiple of 16 bytes apart: A's 70 elements (280 bytes)
// are not, so its tiles come by cp.async; B's rows (along the reduction)
// are 72 elements apart in its layout, so B comes through TMA.
// CHECK-LABEL: func.func @tma_strides(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<32x70xf32>, %[[W:[a-z0-9]+]]: memref<16x70xf32, strided<[72, 1]>>
// CHECK-NOT: kiln.tensor_map %[[X]]
// CHECK: kiln.tensor_map %[[W]] {box = array<i64: 32, 64>, dims = array<i64: 70, 16>, strides = array<i64: 72>, swizzle = 128 : i64}
// CHECK-NOT: kiln.tensor_map
// CHECK: nvgpu.device_async_copy %[[X]]
func.func @tma_strides(%x: memref<32x70xf32>, %w: memref<16x70xf32, strided<[72, 1]>>, %out: memref<32x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<32x70xf32>, memref<16x70xf32, strided<[72, 1]>>) outs(%out : memref<32x16xf32>)
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
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Rows given at run time: a tensor map's sizes are fixed when the runtime
// encodes it, so A's tiles come by cp.async; the weight B, of static
// sizes, still comes through TMA. The blocks along the rows are A's rows
// over 64.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x64xf32>, %[[W:[a-z0-9]+]]: memref<32x64xf32>
// CHECK: %[[ROWS:.+]] = memref.dim %[[X]], %c0
// CHECK-NOT: kiln.tensor_map %[[X]]
// CHECK: kiln.tensor_map %[[W]] {box = array<i64: 32, 64>, dims = array<i64: 64, 32>, strides = array<i64: 64>, swizzle = 128 : i64}
// CHECK-NOT: kiln.tensor_map
// CHECK: arith.ceildivui %[[ROWS]], %c64
// CHECK: nvgpu.device_async_copy %[[X]]
// CHECK: nvvm.wgmma.mma_async
func.func @dynamic_rows(%x: memref<?x64xf32>, %w: memref<32x64xf32>, %out: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf32>, memref<32x64xf32>) outs(%out : memref<?x32xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
