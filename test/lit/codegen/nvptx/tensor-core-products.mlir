// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-tensor-core-products))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A tf32 product becomes one launch of mma.sync with the kernels around
// it: the writer of A (here a rounding) runs as A's tiles are staged in
// shared memory, the zero fill of C becomes the accumulators' start, and
// the epilogue (bias and Relu) runs on them before the store to its
// output. Neither A nor C is stored any more: their buffers are gone. B
// is copied with cp.async, three stages ahead: the first three before
// the loop, the one after in each iteration, whose wait leaves three
// groups in flight. Each tile keeps its operand's contiguous direction: A's the
// reduction, B's the columns, 4 at a time (16 bytes) where runs of 4 stay
// aligned. The product is small, so a block computes 32x32 outputs: the
// tiles are 32 rows (A) or columns (B) by the 32 of a stage's reduction,
// padded, four stages of them.
// CHECK-LABEL: func.func @fused(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<32x16xf32>, %[[W:[a-z0-9]+]]: memref<16x8xf32>, %[[BIAS:[a-z0-9]+]]: memref<8xf32>, %[[OUT:[a-z0-9]+]]: memref<32x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.
// CHECK: gpu.launch {{.+}} workgroup(%[[TA:[a-z0-9]+]] : memref<4x32x36xf32, #gpu.address_space<workgroup>>, %[[TB:[a-z0-9]+]] : memref<4x32x40xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.load %[[X]]
// CHECK-NEXT: math.roundeven
// CHECK: memref.store %{{.+}}, %[[TA]][%c0
// CHECK: nvgpu.device_async_copy %[[W]][{{.+}}], %[[TB]][%c0{{.*}}, {{.+}}], 4, %{{.+}} :
// CHECK: nvgpu.device_async_create_group
// CHECK: memref.store %{{.+}}, %[[TA]][%c1
// CHECK: nvgpu.device_async_copy %[[W]][{{.+}}], %[[TB]][%c1{{.*}}, {{.+}}], 4, %{{.+}} :
// CHECK: nvgpu.device_async_create_group
// CHECK: memref.store %{{.+}}, %[[TA]][%c2
// CHECK: nvgpu.device_async_copy %[[W]][{{.+}}], %[[TB]][%c2{{.*}}, {{.+}}], 4, %{{.+}} :
// CHECK: nvgpu.device_async_create_group
// CHECK-NOT: nvgpu.device_async_wait
// CHECK: scf.for
// CHECK: memref.load %[[X]]
// CHECK-NEXT: math.roundeven
// CHECK: nvgpu.device_async_copy %[[W]]
// CHECK: %[[GROUP:.+]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 3 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load %[[TA]]
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// The stages past the end (zeros) land before the threads exit.
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK: scf.if
// CHECK: memref.load %[[BIAS]]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: } {kiln.flops = {{[0-9]+}} : i64, kiln.kernel = "matmul", kiln.precision = "tf32"}
// CHECK-NOT: linalg.
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

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A buffer two products read keeps its writer: each launch copies it.
// CHECK-LABEL: func.func @shared
// CHECK: %[[A:.+]] = memref.alloc() : memref<32x16xf32>
// CHECK: linalg.generic
// CHECK: math.roundeven
// CHECK: gpu.launch
// CHECK-NOT: math.roundeven
// CHECK: nvgpu.device_async_copy %[[A]]
// CHECK: gpu.launch
// CHECK-NOT: math.roundeven
// CHECK: nvgpu.device_async_copy %[[A]]
func.func @shared(%x: memref<32x16xf32>, %w: memref<16x8xf32>, %c1: memref<32x8xf32>,
                  %c2: memref<32x8xf32>) {
  %a = memref.alloc() : memref<32x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x16xf32>) outs(%a : memref<32x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.roundeven %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<32x16xf32>, memref<16x8xf32>) outs(%c1 : memref<32x8xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<32x16xf32>, memref<16x8xf32>) outs(%c2 : memref<32x8xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// An epilogue that writes what the product still reads (other blocks read
// A while this one stores) stays a kernel of its own, and C is stored. A
// fill of C is taken in even when C lives on after the launch, which
// stores all of it.
// CHECK-LABEL: func.func @overwrites_a(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<32x8xf32>
// CHECK: %[[C:.+]] = memref.alloc() : memref<32x8xf32>
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[C]]
// CHECK: kiln.kernel = "matmul"
// CHECK: linalg.generic {{.+}} ins(%[[C]], %[[X]] : {{.+}}) outs(%[[X]] :
func.func @overwrites_a(%x: memref<32x8xf32>, %w: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<32x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<32x8xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<32x8xf32>, memref<8x8xf32>) outs(%c : memref<32x8xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %x : memref<32x8xf32>, memref<32x8xf32>) outs(%x : memref<32x8xf32>) {
  ^bb0(%i: f32, %r: f32, %o: f32):
    %s = arith.addf %i, %r : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// fp32 products are not for tensor cores: untouched.
// CHECK-LABEL: func.func @fp32
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @fp32(%x: memref<32x16xf32>, %w: memref<16x8xf32>, %c: memref<32x8xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<32x16xf32>, memref<16x8xf32>) outs(%c : memref<32x8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// An epilogue that also loads C in its body (here its transpose) needs C
// stored: it stays a kernel of its own.
// CHECK-LABEL: func.func @epilogue_loads_c(
// CHECK: %[[C:.+]] = memref.alloc() : memref<8x8xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[C]]
// CHECK: kiln.kernel = "matmul"
// CHECK: linalg.generic
// CHECK: memref.load %[[C]]
func.func @epilogue_loads_c(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %out: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x8xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = linalg.index 0 : index
    %q = linalg.index 1 : index
    %t = memref.load %c[%q, %r] : memref<8x8xf32>
    %s = arith.addf %v, %t : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// With 192 columns, three blocks would each round the same elements of A:
// its writer stays a kernel of its own, and A is copied with cp.async.
// CHECK-LABEL: func.func @wide
// CHECK: %[[A:.+]] = memref.alloc() : memref<32x16xf32>
// CHECK: linalg.generic
// CHECK: math.roundeven
// CHECK: gpu.launch
// CHECK-NOT: math.roundeven
// CHECK: nvgpu.device_async_copy %[[A]]
func.func @wide(%x: memref<32x16xf32>, %w: memref<16x192xf32>, %c: memref<32x192xf32>) {
  %a = memref.alloc() : memref<32x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x16xf32>) outs(%a : memref<32x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.roundeven %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<32x16xf32>, memref<16x192xf32>) outs(%c : memref<32x192xf32>)
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

// A product of 128 blocks of 64x64 or more keeps them (16x16 here): each
// warp computes 32x32 outputs, 2x4 mma tiles, so the loop carries 32
// accumulators a thread; the tiles in shared memory are 64 rows or columns.
// CHECK-LABEL: func.func @large(
// CHECK: gpu.launch blocks({{.+}}) in ({{[^,]+}} = %c16{{[_0-9]*}}, {{[^,]+}} = %c16{{[_0-9]*}}, {{.+}}) threads({{.+}}) in ({{.+}} = %c128, {{.+}} workgroup({{.+}} : memref<2x64x36xf32, #gpu.address_space<workgroup>>, {{.+}} : memref<2x32x72xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.+}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
func.func @large(%x: memref<1024x256xf32>, %w: memref<256x1024xf32>, %out: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1024x256xf32>, memref<256x1024xf32>) outs(%out : memref<1024x1024xf32>)
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

// A transpose that only the product reads is taken in (BERT's heads): B's
// element (k, n) is loaded from W at (n, k), the reduction index clamped
// to W's last (15), and stored to B's tile; the transposed buffer is gone.
// CHECK-LABEL: func.func @transposed(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<32x16xf32>, %[[W:[a-z0-9]+]]: memref<8x16xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.transpose
// CHECK: gpu.launch {{.+}} workgroup({{.+}}, %[[TB:[a-z0-9]+]] : memref<4x32x40xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[K:.+]] = arith.minui %{{.+}}, %c15{{[_0-9]*}} : index
// CHECK: %[[VALUE:.+]] = memref.load %[[W]][%{{.+}}, %[[K]]] : memref<8x16xf32>
// CHECK: %[[ELEMENT:.+]] = arith.select %{{.+}}, %[[VALUE]], %{{.+}} : f32
// CHECK-NEXT: memref.store %[[ELEMENT]], %[[TB]]
// CHECK-NOT: linalg.transpose
func.func @transposed(%x: memref<32x16xf32>, %w: memref<8x16xf32>, %out: memref<32x8xf32>) {
  %t = memref.alloc() : memref<16x8xf32>
  linalg.transpose ins(%w : memref<8x16xf32>) outs(%t : memref<16x8xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %t : memref<32x16xf32>, memref<16x8xf32>) outs(%out : memref<32x8xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Rows given at run time (a symbolic batch and sequence over a weight):
// the launch's blocks along the rows are their count over 64, computed
// before it from A's sizes, and its tiles are large. Each thread's rows
// are checked against that count, clamped below it, and split by the
// sequence's size. A still comes in 16-byte copies: its dynamic stride,
// 64 floats times the sequence, keeps runs aligned. C's fill and the
// epilogue are taken in as when the sizes are static.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x?x64xf32>, %[[W:[a-z0-9]+]]: memref<64x96xf32>
// CHECK: %[[OUT:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x?x96xf32>
// CHECK-NOT: memref.alloc
// CHECK: memref.dim %[[X]], %c0
// CHECK: %[[S:.+]] = memref.dim %[[X]], %c1
// CHECK: %[[ROWS:.+]] = arith.muli %{{.+}}, %[[S]]
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[ROWS]], %c64
// CHECK: gpu.launch blocks({{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}} = %c2, {{.+}} workgroup(%[[TA:[a-z0-9]+]] : memref<2x64x36xf32
// CHECK: arith.cmpi ult, %{{.+}}, %[[ROWS]]
// CHECK: %[[LAST:.+]] = arith.subi %[[ROWS]], %c1
// CHECK: %[[ROW:.+]] = arith.minui %{{.+}}, %[[LAST]]
// CHECK: arith.remui %[[ROW]], %[[S]]
// CHECK: arith.divui %[[ROW]], %[[S]]
// CHECK: nvgpu.device_async_copy %[[X]][{{.+}}], %[[TA]][{{.+}}], 4,
// CHECK: nvvm.mma.sync
// CHECK: arith.maximumf
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: } {kiln.flops = 0 : i64, kiln.kernel = "matmul", kiln.precision = "tf32"}
func.func @dynamic(%x: memref<?x?x64xf32>, %w: memref<64x96xf32>, %n: index, %s: index)
    -> memref<?x?x96xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc(%n, %s) : memref<?x?x96xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?x96xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<?x?x64xf32>, memref<64x96xf32>) outs(%c : memref<?x?x96xf32>)
      attrs = {kiln.precision = "tf32"} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %t = arith.addf %o, %m : f32
    linalg.yield %t : f32
  }
  %out = memref.alloc(%n, %s) : memref<?x?x96xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<?x?x96xf32>) outs(%out : memref<?x?x96xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %zero : f32
    linalg.yield %r : f32
  }
  return %out : memref<?x?x96xf32>
}
