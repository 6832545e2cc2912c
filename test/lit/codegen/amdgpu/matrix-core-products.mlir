// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-matrix-core-products))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-matrix-core-products{xf32=true}))' | FileCheck %s --check-prefix=XF32

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
// tiles of 32x32: 64 blocks). fp32 runs on fp32 MFMA; fp8 stays a scalar
// kernel (gfx942's MFMA reads E4M3FNUZ).
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
