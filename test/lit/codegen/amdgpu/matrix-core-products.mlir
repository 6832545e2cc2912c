// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-matrix-core-products))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-matrix-core-products{xf32=true}))' | FileCheck %s --check-prefix=XF32
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-matrix-core-products{xf32=true fp8=fp8-fnuz}))' | FileCheck %s --check-prefix=FNUZ
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-matrix-core-products{fp8=fp8}))' | FileCheck %s --check-prefix=OCP

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A tf32 product becomes one launch of 4 wavefronts with the kernels around
// it: the writer of A (a rounding) runs as A's tiles are staged in LDS, the
// zero fill of C becomes the accumulators' start, and the epilogue (bias
// and Relu) runs on them before the store to its output. The product is
// small, so a block computes 32x32 outputs: each wavefront one 16x16 MFMA
// tile, from tiles of 32 rows by the 32 of a stage's reduction (padded to
// 33). Without xf32 (gfx90a), tf32 runs on fp32 MFMA, 4 of the reduction
// a step (8 steps a stage), one element a lane; with it (gfx942), xf32, 8
// a step, two elements a lane.
// CHECK-LABEL: func.func @fused(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<32x16xf32>, %[[W:[a-z0-9]+]]: memref<16x8xf32>, %[[BIAS:[a-z0-9]+]]: memref<8xf32>, %[[OUT:[a-z0-9]+]]: memref<32x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.
// CHECK: gpu.launch {{.+}} threads({{.+}}) in (%{{.+}} = %[[C256:.+]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) workgroup(%[[TA:[a-z0-9]+]] : memref<32x33xf32, #gpu.address_space<workgroup>>, %[[TB:[a-z0-9]+]] : memref<32x33xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.from_elements {{.+}} : vector<4xf32>
// CHECK: scf.for
// CHECK: memref.load %[[X]]
// CHECK-NEXT: math.roundeven
// CHECK: memref.store %{{.+}}, %[[TA]]
// CHECK: memref.load %[[W]]
// CHECK: memref.store %{{.+}}, %[[TB]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[TA]]
// CHECK: memref.load %[[TB]]
// CHECK: amdgpu.mfma 16x16x4 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : f32, f32, vector<4xf32>
// CHECK-COUNT-7: amdgpu.mfma 16x16x4
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: vector.extract
// CHECK: scf.if
// CHECK: memref.load %[[BIAS]]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: } {kiln.flops = {{[0-9]+}} : i64, kiln.kernel = "matmul", kiln.precision = "tf32"}
// CHECK-NOT: linalg.
// XF32-LABEL: func.func @fused(
// XF32: vector.from_elements {{.+}} : vector<2xf32>
// XF32: amdgpu.mfma 16x16x8 %{{.+}} * %{{.+}} + %{{.+}} {reducePrecision} blgp = none : vector<2xf32>, vector<2xf32>, vector<4xf32>
// XF32-COUNT-3: amdgpu.mfma 16x16x8
// XF32-NOT: amdgpu.mfma
// XF32: kiln.kernel = "matmul"
func.func @fused(%x: memref<32x16xf32>, %w: memref<16x8xf32>, %bias: memref<8xf32>,
                 %out: memref<32x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<32x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x16xf32>) outs(%a : memref<32x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.roundeven %in : f32
    linalg.yield %r : f32
  }
  %c = memref.alloc() : memref<32x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<32x8xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<32x16xf32>, memref<16x8xf32>) outs(%c : memref<32x8xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<32x8xf32>, memref<8xf32>) outs(%out : memref<32x8xf32>) {
  ^bb0(%i: f32, %b: f32, %o: f32):
    %s = arith.addf %i, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// fp16 and bf16 read four elements a lane, 16 of the reduction a step.
// A product of 256x256 launches 16 blocks of 64x64 (fewer than 128, so
// tiles of 32x32: 64 blocks). fp32 runs on fp32 MFMA; fp8 (E4M3FN) stays
// a scalar kernel unless the chip's MFMA reads it (gfx950's does, 16x16x32,
// eight elements a lane; gfx942's reads E4M3FNUZ).
// CHECK-LABEL: func.func @formats(
// CHECK: gpu.launch
// CHECK-COUNT-2: amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK: kiln.precision = "fp16"
// CHECK: gpu.launch
// CHECK-COUNT-2: amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
// CHECK: kiln.precision = "bf16"
// CHECK: gpu.launch
// CHECK-COUNT-8: amdgpu.mfma 16x16x4 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : f32, f32, vector<4xf32>
// CHECK: kiln.kernel = "matmul"
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK-SAME: kiln.precision = "fp8"
// FNUZ-LABEL: func.func @formats(
// FNUZ-COUNT-3: gpu.launch
// FNUZ-NOT: gpu.launch
// FNUZ: kiln.precision = "fp8"
// OCP-LABEL: func.func @formats(
// OCP-COUNT-3: gpu.launch
// OCP: gpu.launch
// OCP: arith.truncf %{{.+}} : vector<8xf32> to vector<8xf8E4M3FN>
// OCP: amdgpu.mfma 16x16x32 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : vector<8xf8E4M3FN>, vector<8xf8E4M3FN>, vector<4xf32>
// OCP: kiln.precision = "fp8"
// OCP-NOT: linalg.generic
func.func @formats(%x: memref<256x256xf32>, %w: memref<256x256xf32>, %c1: memref<256x256xf32>,
                   %c2: memref<256x256xf32>, %c3: memref<256x256xf32>, %c4: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<256x256xf32>, memref<256x256xf32>) outs(%c1 : memref<256x256xf32>)
      attrs = {kiln.precision = "fp16"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<256x256xf32>, memref<256x256xf32>) outs(%c2 : memref<256x256xf32>)
      attrs = {kiln.precision = "bf16"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<256x256xf32>, memref<256x256xf32>) outs(%c3 : memref<256x256xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<256x256xf32>, memref<256x256xf32>) outs(%c4 : memref<256x256xf32>)
      attrs = {kiln.precision = "fp8", kiln.scales = array<f32: 1.0, 1.0>} {
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

// On gfx942 (fp8-fnuz) an fp8-fnuz product runs on 16x16x32 MFMA, eight
// elements a lane converted as they are read from LDS. Its operands hold
// E4M3FNUZ values times their scales (0.5 and 0.25): staging divides them
// out (x 2, x 4), the accumulators start from C over both (x 8) and are
// multiplied back (x 0.125) as they are stored. Elsewhere it stays a loop.
// CHECK-LABEL: func.func @fp8(
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// OCP-LABEL: func.func @fp8(
// OCP-NOT: gpu.launch
// FNUZ-LABEL: func.func @fp8(
// FNUZ-DAG: %[[EIGHT:.+]] = arith.constant 8.000000e+00 : f32
// FNUZ: arith.mulf %{{.+}}, %[[EIGHT]] : f32
// FNUZ: scf.for
// FNUZ: memref.load %[[X:[a-z0-9]+]]
// FNUZ-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// FNUZ-NEXT: arith.mulf %{{.+}}, %[[TWO]] : f32
// FNUZ: %[[FOUR:.+]] = arith.constant 4.000000e+00 : f32
// FNUZ-NEXT: arith.mulf %{{.+}}, %[[FOUR]] : f32
// FNUZ: gpu.barrier
// FNUZ: %[[A:.+]] = arith.truncf %{{.+}} : vector<8xf32> to vector<8xf8E4M3FNUZ>
// FNUZ: %[[B:.+]] = arith.truncf %{{.+}} : vector<8xf32> to vector<8xf8E4M3FNUZ>
// FNUZ-NEXT: amdgpu.mfma 16x16x32 %[[A]] * %[[B]] + %{{.+}} blgp = none : vector<8xf8E4M3FNUZ>, vector<8xf8E4M3FNUZ>, vector<4xf32>
// FNUZ-NOT: amdgpu.mfma
// FNUZ: gpu.barrier
// FNUZ: %[[EIGHTH:.+]] = arith.constant 1.250000e-01 : f32
// FNUZ-NEXT: %[[STORED:.+]] = arith.mulf %{{.+}}, %[[EIGHTH]] : f32
// FNUZ: memref.store %[[STORED]]
// FNUZ: kiln.precision = "fp8-fnuz"
// FNUZ-NOT: linalg.generic
func.func @fp8(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
      attrs = {kiln.precision = "fp8-fnuz", kiln.scales = array<f32: 0.5, 0.25>} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// Rows given at run time (batch and sequence): the blocks along them are
// their count over 64, computed before the launch from A's sizes; each
// lane's rows are checked against that count and split by the sequence's
// size.
// CHECK-LABEL: func.func @dynamic(
// XF32-LABEL: func.func @dynamic(
// FNUZ-LABEL: func.func @dynamic(
// OCP-LABEL: func.func @dynamic(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x?x64xf32>
// CHECK: memref.dim %[[X]], %c0
// CHECK: %[[S:.+]] = memref.dim %[[X]], %c1
// CHECK: %[[ROWS:.+]] = arith.muli %{{.+}}, %[[S]]
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[ROWS]], %c64
// CHECK: gpu.launch blocks({{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}} = %c1
// CHECK: arith.cmpi ult, %{{.+}}, %[[ROWS]]
// CHECK: arith.remui %{{.+}}, %[[S]]
// CHECK: amdgpu.mfma
func.func @dynamic(%x: memref<?x?x64xf32>, %w: memref<64x32xf32>, %out: memref<?x?x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xf32>, memref<64x32xf32>) outs(%out : memref<?x?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
