// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-contractions),canonicalize)' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-contractions{vector-bits=512}),canonicalize)' | FileCheck %s --check-prefix=WIDE
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-contractions{fuse=false}))' | FileCheck %s --check-prefix=UNFUSED
// RUN: not kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-contractions{vector-bits=96}))' 2>&1 | FileCheck %s --check-prefix=BITS

// BITS: vector-bits must be 128, 256 or 512, not 96

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

// An 8x20 product over k = 3, at 256 bits: two tasks, one per tile of 16
// columns. Two tiles of rows read each task's columns of B, so the task
// first copies them into a panel (3 x 16, its rows adjacent, on a cache
// line's boundary so that no vector of it straddles two). A whole tile
// of 6 rows by two vectors of 8 columns holds 12 accumulators through the
// reduction, each step loading two vectors of the panel and broadcasting
// one scalar of A per row; the 2 remaining rows are a tile of their own;
// the last 4 columns are one masked vector.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<8x3xf32>, %[[B:[a-z0-9]+]]: memref<3x20xf32>, %[[C:[a-z0-9]+]]: memref<8x20xf32>)
// CHECK: %[[PANEL:.+]] = memref.alloca() {alignment = 64 : i64} : memref<3x16xf32>
// CHECK: scf.for %[[TASK:[a-z0-9]+]] = %{{.+}} to %[[C2:[a-z0-9]+]] step
// CHECK: %[[COL:.+]] = arith.muli %[[TASK]], %[[C16:[a-z0-9]+]]
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %[[TASK]], %[[C1:[a-z0-9]+]]
// CHECK: scf.if %[[LAST]] {
// CHECK: scf.for %[[KC:[a-z0-9]+]] =
// CHECK: %[[COPIED:.+]] = vector.maskedload %[[B]][%[[KC]], %[[COL]]]
// CHECK: vector.maskedstore %[[PANEL]][%[[KC]], %{{.+}}], %{{.+}}, %[[COPIED]]
// CHECK: %[[MASK:.+]] = vector.constant_mask [4] : vector<8xi1>
// CHECK: vector.maskedload %[[C]][%{{.+}}, %[[COL]]], %[[MASK]]
// CHECK: scf.for
// CHECK: vector.maskedload %[[PANEL]][%{{.+}}, %{{.+}}], %[[MASK]]
// CHECK: vector.maskedstore %[[C]][%{{.+}}, %[[COL]]], %[[MASK]]
// CHECK: } else {
// CHECK: scf.for %[[KC:[a-z0-9]+]] =
// CHECK: vector.load %[[B]][%[[KC]], %[[COL]]]
// CHECK: vector.store %{{.+}}, %[[PANEL]][%[[KC]], %{{.+}}]
// CHECK: vector.load %[[B]][%[[KC]], %{{.+}}]
// CHECK: vector.store %{{.+}}, %[[PANEL]][%[[KC]], %{{.+}}]
// CHECK-COUNT-12: vector.load %[[C]]
// CHECK: %[[TILES:.+]]:12 = scf.for %[[K:[a-z0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// CHECK: %[[B0:.+]] = vector.load %[[PANEL]][%[[K]], %{{.+}}] : memref<3x16xf32>, vector<8xf32>
// CHECK: %[[B1:.+]] = vector.load %[[PANEL]][%[[K]], %{{.+}}] : memref<3x16xf32>, vector<8xf32>
// CHECK: %[[A0:.+]] = memref.load %[[A]][%{{.+}}, %[[K]]]
// CHECK: %[[S0:.+]] = vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK: vector.fma %[[S0]], %[[B0]], %{{.+}} : vector<8xf32>
// CHECK: vector.fma %[[S0]], %[[B1]], %{{.+}} : vector<8xf32>
// CHECK-COUNT-10: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-12: vector.store %[[TILES]]#{{[0-9]+}}, %[[C]]
// CHECK: scf.for {{.+}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-NOT: linalg.generic
// At 512 bits a tile is up to 12 rows by two vectors of 16: the whole
// product is one tile of 8 rows by 16 columns and 4 masked ones.
// WIDE-LABEL: func.func @matmul(
// WIDE: vector.constant_mask [4] : vector<16xi1>
// WIDE: scf.for {{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// WIDE-NOT: scf.for
// WIDE: return
func.func @matmul(%a: memref<8x3xf32>, %b: memref<3x20xf32>, %c: memref<8x20xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x3xf32>, memref<3x20xf32>) outs(%c : memref<8x20xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A grouped convolution's product (n, g, f, o | ck, as the Conv generator
// emits it) has one task per batch, group and tile of 16 columns; a task
// finds its indices from its number and runs every row tile of its columns.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<2x6x9xf32>, %[[X:[a-z0-9]+]]: memref<2x2x9x64xf32>, %[[Y:[a-z0-9]+]]: memref<2x2x6x64xf32>
// CHECK: scf.for %[[TASK:[a-z0-9]+]] = %{{.+}} to %[[C16:[a-z0-9]+]] step
// CHECK: %[[TILE:.+]] = arith.remui %[[TASK]], %[[C4:[a-z0-9]+]]
// CHECK: %[[REST:.+]] = arith.divui %[[TASK]], %[[C4]]
// CHECK: %[[G:.+]] = arith.remui %[[REST]], %[[C2:[a-z0-9]+]]
// CHECK: %[[N:.+]] = arith.divui %[[REST]], %[[C2]]
// CHECK: %[[COL:.+]] = arith.muli %[[TILE]], %[[C16]]
// CHECK: vector.load %[[Y]][%[[N]], %[[G]], %{{.+}}, %[[COL]]]
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: vector.load %[[X]][%[[N]], %[[G]], %[[K]], %[[COL]]]
// CHECK: memref.load %[[W]][%[[G]], %{{.+}}, %[[K]]]
#wmap = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#xmap = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#ymap = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
func.func @grouped(%w: memref<2x6x9xf32>, %x: memref<2x2x9x64xf32>, %y: memref<2x2x6x64xf32>) {
  linalg.generic {indexing_maps = [#wmap, #xmap, #ymap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %x : memref<2x6x9xf32>, memref<2x2x9x64xf32>) outs(%y : memref<2x2x6x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A broadcast batch dimension (read at index 0) is read as it is mapped.
// CHECK-LABEL: func.func @broadcast_batch
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<1x6x5xf32>
// CHECK: scf.for %[[TASK:[a-z0-9]+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: memref.load %[[A]][%[[ZERO:[a-z0-9]+]], %[[ZERO]], %[[K]]]
#l = affine_map<(b, m, k, n) -> (0, m, k)>
#r = affine_map<(b, m, k, n) -> (b, k, n)>
#o = affine_map<(b, m, k, n) -> (b, m, n)>
func.func @broadcast_batch(%a: memref<1x6x5xf32>, %b: memref<3x5x16xf32>, %c: memref<3x6x16xf32>) {
  linalg.generic {indexing_maps = [#l, #r, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x6x5xf32>, memref<3x5x16xf32>) outs(%c : memref<3x6x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A product of at least 65536 multiply-adds runs its tasks (here 4 column
// tiles) as an scf.forall; each writes its own columns of C. Its reduction
// of 64, long and even, takes two steps an iteration: tiles of 6 and 4
// rows by two vectors, 2 x (12 + 8) FMAs.
// CHECK-LABEL: func.func @parallel
// CHECK: scf.forall (%[[TASK:[a-z0-9]+]]) in (4) {
// CHECK: arith.muli %[[TASK]], %{{.+}} : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[TWO:c2]]
// CHECK-COUNT-24: vector.fma
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[TWO]]
// CHECK-COUNT-16: vector.fma
// CHECK-NOT: vector.fma
// CHECK: return
#pa = affine_map<(m, k, n) -> (m, k)>
#pb = affine_map<(m, k, n) -> (k, n)>
#pc = affine_map<(m, k, n) -> (m, n)>
func.func @parallel(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: other element types, a B read across its rows, two
// reductions, a body that is not a multiply-add, an A packed in groups of
// rows that a tile's rows do not divide (5, where a tile has 6).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: vector.
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: vector.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#bt = affine_map<(m, k, n) -> (n, k)>
#c = affine_map<(m, k, n) -> (m, n)>
#a2 = affine_map<(m, k, l, n) -> (m, k, l)>
#b2 = affine_map<(m, k, l, n) -> (k, l, n)>
#c2 = affine_map<(m, k, l, n) -> (m, n)>
#fives = affine_map<(m, k, n) -> (m floordiv 5, k, m mod 5)>
func.func @left_alone(%a16: memref<4x4xf16>, %b16: memref<4x16xf16>, %c16: memref<4x16xf16>,
                      %a: memref<4x4xf32>, %bt: memref<16x4xf32>, %c: memref<4x16xf32>,
                      %a2: memref<4x2x2xf32>, %b2: memref<2x2x16xf32>, %b: memref<4x16xf32>,
                      %a5: memref<2x4x5xf32>, %c10: memref<10x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a16, %b16 : memref<4x4xf16>, memref<4x16xf16>) outs(%c16 : memref<4x16xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %bt : memref<4x4xf32>, memref<16x4xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%a2, %b2 : memref<4x2x2xf32>, memref<2x2x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<4x4xf32>, memref<4x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#fives, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a5, %b : memref<2x4x5xf32>, memref<4x16xf32>) outs(%c10 : memref<10x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The kernels around a product join it. A convolution's product (3x3
// windows of 2 channels over a 6x6 input padded by 1, 4 filters) reads
// im2col columns that a gather computes; its accumulator is zero-filled;
// an elementwise kernel then adds the bias (per filter: one broadcast
// scalar per row) and a residual (along the columns: a vector), and
// applies Relu. All of it is one loop nest: each task computes its panel
// of the columns (18 rows by 16) on its stack with the gather's body, run
// on a vector of columns at a time (their output positions lane by lane as
// 32-bit indices, the input read by vector.gather), the accumulators start
// at zero, and the epilogue runs on them before the store. Neither the
// columns nor the accumulator is stored. Before its reduction a tile
// fetches the lines of the output it will store and of the residual it
// will read: a row apart each, and in memory rather than cache when the
// output is large.
// With fuse=false (kiln compile --no-fusion) the product is tiled alone.
// UNFUSED-LABEL: func.func @fused
// UNFUSED: linalg.generic {{.+}} outs(%{{.+}} : memref<1x1x2x3x3x6x6xf32>)
// UNFUSED: linalg.fill
// UNFUSED: vector.fma
// UNFUSED: linalg.generic
// UNFUSED: arith.maximumf
// UNFUSED-LABEL: func.func @not_fused
// CHECK-LABEL: func.func @fused
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x2x6x6xf32>, %[[W:[a-z0-9]+]]: memref<1x4x18xf32>, %[[BIAS:[a-z0-9]+]]: memref<4xf32>, %[[RES:[a-z0-9]+]]: memref<1x4x6x6xf32>
// CHECK-NOT: memref.alloc() : memref<1x1x2x3x3x6x6xf32>
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[OUT:.+]] = memref.alloc() : memref<1x4x6x6xf32>
// CHECK-DAG: %[[RES36:.+]] = memref.collapse_shape %[[RES]] {{\[\[}}0], [1], [2, 3]] : memref<1x4x6x6xf32> into memref<1x4x36xf32>
// CHECK-DAG: %[[OUT36:.+]] = memref.collapse_shape %[[OUT]] {{\[\[}}0], [1], [2, 3]] : memref<1x4x6x6xf32> into memref<1x4x36xf32>
// CHECK: %[[PANEL:.+]] = memref.alloca() {alignment = 64 : i64} : memref<18x16xf32>
// CHECK: scf.for %[[TASK:[a-z0-9]+]] =
// CHECK: arith.remui %{{.+}}, %{{.+}} : vector<8xi32>
// CHECK: scf.for %[[C:[a-z0-9]+]] =
// CHECK: scf.for %[[KH:[a-z0-9]+]] =
// CHECK: scf.for %[[KW:[a-z0-9]+]] =
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2, 3]] : memref<1x2x6x6xf32> into memref<72xf32>
// CHECK: %[[CELLS:.+]] = vector.gather %[[FLAT]][%{{.+}}] [%{{.+}}], %{{.+}}, %{{.+}} : memref<72xf32>, vector<8xi32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: %[[VALUES:.+]] = arith.select %{{.+}}, %[[CELLS]], %{{.+}} : vector<8xi1>, vector<8xf32>
// CHECK: vector.store %[[VALUES]], %[[PANEL]][%{{.+}}, %{{.+}}]
// CHECK: memref.prefetch %[[OUT36]][%{{.+}}], write, locality<3>, data
// CHECK: memref.prefetch %[[RES36]][%{{.+}}], read, locality<3>, data
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[ZEROS]],
// CHECK: vector.load %[[PANEL]]
// CHECK: vector.fma
// CHECK: %[[B:.+]] = memref.load %[[BIAS]]
// CHECK: %[[BS:.+]] = vector.broadcast %[[B]] : f32 to vector<8xf32>
// CHECK: %[[R:.+]] = vector.load %[[RES36]]
// CHECK: %[[S1:.+]] = arith.addf %{{.+}}, %[[BS]] : vector<8xf32>
// CHECK: %[[S2:.+]] = arith.addf %[[S1]], %[[R]] : vector<8xf32>
// CHECK: %[[RELU:.+]] = arith.maximumf %[[S2]], %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[RELU]], %[[OUT36]]
// CHECK: } {kiln.flops = {{[0-9]+}} : i64, kiln.kernel = "matmul"}
// CHECK-NOT: linalg.generic
// CHECK: return %[[OUT]]
#id7 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
#fw = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#fx = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#fy = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#filter = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @fused(%x: memref<1x2x6x6xf32>, %w: memref<1x4x18xf32>, %bias: memref<4xf32>,
                 %res: memref<1x4x6x6xf32>) -> memref<1x4x6x6xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<1x1x2x3x3x6x6xf32>
  linalg.generic {indexing_maps = [#id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      outs(%cols : memref<1x1x2x3x3x6x6xf32>) {
  ^bb0(%out: f32):
    %c = linalg.index 2 : index
    %kh = linalg.index 3 : index
    %kw = linalg.index 4 : index
    %oh = linalg.index 5 : index
    %ow = linalg.index 6 : index
    %h0 = arith.addi %oh, %kh : index
    %h = arith.subi %h0, %c1 : index
    %w0 = arith.addi %ow, %kw : index
    %wi = arith.subi %w0, %c1 : index
    %hl = arith.cmpi sge, %h, %c0 : index
    %hh = arith.cmpi slt, %h, %c6 : index
    %wl = arith.cmpi sge, %wi, %c0 : index
    %wh = arith.cmpi slt, %wi, %c6 : index
    %in0 = arith.andi %hl, %hh : i1
    %in1 = arith.andi %wl, %wh : i1
    %in = arith.andi %in0, %in1 : i1
    %hs = arith.select %in0, %h, %c0 : index
    %ws = arith.select %in1, %wi, %c0 : index
    %v = memref.load %x[%c0, %c, %hs, %ws] : memref<1x2x6x6xf32>
    %cell = arith.select %in, %v, %zero : f32
    linalg.yield %cell : f32
  }
  %columns = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<1x1x2x3x3x6x6xf32> into memref<1x1x18x36xf32>
  %acc = memref.alloc() : memref<1x4x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x4x6x6xf32>)
  %flat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<1x4x6x6xf32> into memref<144xf32>
  %grouped = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 1, 4, 36] : memref<144xf32> into memref<1x1x4x36xf32>
  linalg.generic {indexing_maps = [#fw, #fx, #fy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %columns : memref<1x4x18xf32>, memref<1x1x18x36xf32>) outs(%grouped : memref<1x1x4x36xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  %out = memref.alloc() : memref<1x4x6x6xf32>
  linalg.generic {indexing_maps = [#id4, #filter, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc, %bias, %res : memref<1x4x6x6xf32>, memref<4xf32>, memref<1x4x6x6xf32>) outs(%out : memref<1x4x6x6xf32>) {
  ^bb0(%y: f32, %b: f32, %r: f32, %o: f32):
    %s1 = arith.addf %y, %b : f32
    %s2 = arith.addf %s1, %r : f32
    %relu = arith.maximumf %s2, %zero : f32
    linalg.yield %relu : f32
  }
  return %out : memref<1x4x6x6xf32>
}

// -----

// The same convolution's columns, the gather marked as the input shifted
// (kiln.im2col_shift, stride 1, rows as long as the input's): each task
// computes, once, the lanes inside the input for each window offset, then
// each row of its panel is one masked load of the input seen as one
// dimension at the row's shift from the task's first column, gathered
// only where the vector would start before the input or end after it.
// CHECK-LABEL: func.func @shifted
// CHECK: scf.for %[[TASK:[a-z0-9]+]] =
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1, 2, 3]] : memref<1x2x6x6xf32> into memref<72xf32>
// CHECK: arith.divui %{{.+}}, %{{.+}} : vector<8xi32>
// CHECK: scf.for %[[C:[a-z0-9]+]] =
// CHECK: %[[ROW:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: vector.maskedload %[[FLAT]][%{{.+}}], %{{.+}}, %{{.+}} : memref<72xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: } else {
// CHECK: vector.gather %{{.+}} : memref<72xf32, strided<[1]>>
// CHECK: vector.store %[[ROW]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<18x16xf32>, vector<8xf32>
// CHECK: vector.fma
#id7 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
#fw = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#fx = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#fy = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
func.func @shifted(%x: memref<1x2x6x6xf32>, %w: memref<1x4x18xf32>) -> memref<1x4x6x6xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<1x1x2x3x3x6x6xf32>
  linalg.generic {indexing_maps = [#id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      outs(%cols : memref<1x1x2x3x3x6x6xf32>) attrs = {kiln.im2col_shift = array<i64: 1, 1, 1>} {
  ^bb0(%out: f32):
    %c = linalg.index 2 : index
    %kh = linalg.index 3 : index
    %kw = linalg.index 4 : index
    %oh = linalg.index 5 : index
    %ow = linalg.index 6 : index
    %h0 = arith.addi %oh, %kh : index
    %h = arith.subi %h0, %c1 : index
    %w0 = arith.addi %ow, %kw : index
    %wi = arith.subi %w0, %c1 : index
    %hl = arith.cmpi sge, %h, %c0 : index
    %hh = arith.cmpi slt, %h, %c6 : index
    %wl = arith.cmpi sge, %wi, %c0 : index
    %wh = arith.cmpi slt, %wi, %c6 : index
    %in0 = arith.andi %hl, %hh : i1
    %in1 = arith.andi %wl, %wh : i1
    %in = arith.andi %in0, %in1 : i1
    %hs = arith.select %in0, %h, %c0 : index
    %ws = arith.select %in1, %wi, %c0 : index
    %v = memref.load %x[%c0, %c, %hs, %ws] : memref<1x2x6x6xf32>
    %cell = arith.select %in, %v, %zero : f32
    linalg.yield %cell : f32
  }
  %columns = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<1x1x2x3x3x6x6xf32> into memref<1x1x18x36xf32>
  %acc = memref.alloc() : memref<1x4x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x4x6x6xf32>)
  %flat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<1x4x6x6xf32> into memref<144xf32>
  %grouped = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 1, 4, 36] : memref<144xf32> into memref<1x1x4x36xf32>
  linalg.generic {indexing_maps = [#fw, #fx, #fy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %columns : memref<1x4x18xf32>, memref<1x1x18x36xf32>) outs(%grouped : memref<1x1x4x36xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  return %acc : memref<1x4x6x6xf32>
}

// -----

// The same at a batch a run gives: each task reads its image, the input
// seen as one dimension from its batch index's image.
// CHECK-LABEL: func.func @shifted_batch
// CHECK: %[[INPUT:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1, 2, 3]] : memref<?x2x6x6xf32> into memref<?xf32>
// CHECK: scf.for %[[TASK:[a-z0-9]+]] =
// CHECK: %[[FLAT:.+]] = memref.subview %[[INPUT]][%{{.+}}] [72] [1]
// CHECK: vector.maskedload %[[FLAT]][%{{.+}}], %{{.+}}, %{{.+}} : memref<72xf32, strided<[1], offset: ?>>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: vector.gather %[[FLAT]]
// CHECK: vector.fma
#dyn7 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
#dw = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#dx = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#dy = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
func.func @shifted_batch(%x: memref<?x2x6x6xf32>, %w: memref<1x4x18xf32>) -> memref<?x4x6x6xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x2x6x6xf32>
  %cols = memref.alloc(%n) : memref<?x1x2x3x3x6x6xf32>
  linalg.generic {indexing_maps = [#dyn7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      outs(%cols : memref<?x1x2x3x3x6x6xf32>) attrs = {kiln.im2col_shift = array<i64: 1, 1, 1>} {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %c = linalg.index 2 : index
    %kh = linalg.index 3 : index
    %kw = linalg.index 4 : index
    %oh = linalg.index 5 : index
    %ow = linalg.index 6 : index
    %h0 = arith.addi %oh, %kh : index
    %h = arith.subi %h0, %c1 : index
    %w0 = arith.addi %ow, %kw : index
    %wi = arith.subi %w0, %c1 : index
    %hl = arith.cmpi sge, %h, %c0 : index
    %hh = arith.cmpi slt, %h, %c6 : index
    %wl = arith.cmpi sge, %wi, %c0 : index
    %wh = arith.cmpi slt, %wi, %c6 : index
    %in0 = arith.andi %hl, %hh : i1
    %in1 = arith.andi %wl, %wh : i1
    %in = arith.andi %in0, %in1 : i1
    %hs = arith.select %in0, %h, %c0 : index
    %ws = arith.select %in1, %wi, %c0 : index
    %v = memref.load %x[%b, %c, %hs, %ws] : memref<?x2x6x6xf32>
    %cell = arith.select %in, %v, %zero : f32
    linalg.yield %cell : f32
  }
  %columns = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<?x1x2x3x3x6x6xf32> into memref<?x1x18x36xf32>
  %acc = memref.alloc(%n) : memref<?x4x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x4x6x6xf32>)
  %flat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<?x4x6x6xf32> into memref<?xf32>
  %grouped = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [%n, 1, 4, 36] : memref<?xf32> into memref<?x1x4x36xf32>
  linalg.generic {indexing_maps = [#dw, #dx, #dy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %columns : memref<1x4x18xf32>, memref<?x1x18x36xf32>) outs(%grouped : memref<?x1x4x36xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  return %acc : memref<?x4x6x6xf32>
}

// -----

// An elementwise producer of B reading inputs (a squeeze-excitation's
// scale of each channel, before a 1x1 convolution of 4 channels of 5x12 to
// 8) computes each task's panel in runs along a row of 12: from column p,
// the next min(12 - p mod 12, columns left in the tile, 8) columns on
// lanes, x read as a masked vector and the scale as a scalar, stored to
// the panel at p's offset in the tile.
// CHECK-LABEL: func.func @scaled
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x4x5x12xf32>, %[[SCALE:[a-z0-9]+]]: memref<4xf32>
// CHECK: %[[PANEL:.+]] = memref.alloca() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK: scf.while (%[[P:.+]] = %[[COLUMN:.+]]) : (index) -> index {
// CHECK: arith.cmpi slt, %[[P]]
// CHECK: } do {
// CHECK: ^bb0(%[[Q:.+]]: index):
// CHECK: %[[W:.+]] = arith.remui %[[Q]], %{{.+}} : index
// CHECK: %[[H:.+]] = arith.divui %[[Q]], %{{.+}} : index
// CHECK: %[[ROW:.+]] = arith.subi %{{.+}}, %[[W]] : index
// CHECK: %[[LEFT:.+]] = arith.minsi %[[ROW]], %{{.+}} : index
// CHECK: %[[LANES:.+]] = arith.minsi %[[LEFT]], %{{.+}} : index
// CHECK: %[[OFFSET:.+]] = arith.subi %[[Q]], %[[COLUMN]] : index
// CHECK: %[[MASK:.+]] = vector.create_mask %[[LANES]] : vector<8xi1>
// CHECK: scf.for %[[C:[a-z0-9]+]] =
// CHECK: %[[V:.+]] = vector.maskedload %[[X]][%{{.+}}, %[[C]], %[[H]], %[[W]]], %[[MASK]]
// CHECK: %[[S:.+]] = memref.load %[[SCALE]][%[[C]]]
// CHECK: %[[SS:.+]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: %[[SCALED:.+]] = arith.mulf %[[V]], %[[SS]] : vector<8xf32>
// CHECK: vector.maskedstore %[[PANEL]][%[[C]], %[[OFFSET]]], %[[MASK]], %[[SCALED]]
// CHECK: %[[NEXT:.+]] = arith.addi %[[Q]], %[[LANES]] : index
// CHECK: scf.yield %[[NEXT]]
// CHECK: vector.load %[[PANEL]]
// CHECK: vector.fma
#sx = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ss = affine_map<(d0, d1, d2, d3) -> (d1)>
#sw = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#sc = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#sy = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
func.func @scaled(%x: memref<1x4x5x12xf32>, %scale: memref<4xf32>, %w: memref<1x8x4xf32>)
    -> memref<1x1x8x60xf32> {
  %zero = arith.constant 0.0 : f32
  %scaled = memref.alloc() : memref<1x4x5x12xf32>
  linalg.generic {indexing_maps = [#sx, #ss, #sx], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %scale : memref<1x4x5x12xf32>, memref<4xf32>) outs(%scaled : memref<1x4x5x12xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  }
  %columns = memref.collapse_shape %scaled [[0], [1], [2, 3]] : memref<1x4x5x12xf32> into memref<1x4x60xf32>
  %grouped = memref.expand_shape %columns [[0], [1, 2], [3]] output_shape [1, 1, 4, 60] : memref<1x4x60xf32> into memref<1x1x4x60xf32>
  %acc = memref.alloc() : memref<1x1x8x60xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x1x8x60xf32>)
  linalg.generic {indexing_maps = [#sw, #sc, #sy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %grouped : memref<1x8x4xf32>, memref<1x1x4x60xf32>) outs(%acc : memref<1x1x8x60xf32>) {
  ^bb0(%p: f32, %q: f32, %a: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  }
  return %acc : memref<1x1x8x60xf32>
}

// -----

// A product with many whole tiles of rows (192 rows: 32 tiles of 6 at 256
// bits) whose B is not computed per task splits its rows into blocks of 8
// tiles: 4 tasks, each copying its columns of B and computing the tiles
// from block * 8, so that a task writes rows near one another.
// CHECK-LABEL: func.func @row_blocks
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C6:.+]] = arith.constant 6 : index
// CHECK: scf.for %[[TASK:[a-z0-9]+]] = %{{.+}} to %[[C4]] step
// CHECK: vector.store %{{.+}}, %[[PANEL:.+]][
// CHECK: %[[FIRST:.+]] = arith.muli %[[TASK]], %[[C8]] : index
// CHECK: %[[END:.+]] = arith.addi %[[FIRST]], %[[C8]] : index
// CHECK: scf.for %[[TILE:[a-z0-9]+]] = %[[FIRST]] to %[[END]] step
// CHECK: %[[R:.+]] = arith.muli %[[TILE]], %[[C6]] : index
// CHECK: vector.load %{{.+}}[%[[R]], %{{.+}}] : memref<192x16xf32>
#ra = affine_map<(m, k, n) -> (m, k)>
#rb = affine_map<(m, k, n) -> (k, n)>
#rc = affine_map<(m, k, n) -> (m, n)>
func.func @row_blocks(%a: memref<192x2xf32>, %b: memref<2x16xf32>, %c: memref<192x16xf32>) {
  linalg.generic {indexing_maps = [#ra, #rb, #rc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<192x2xf32>, memref<2x16xf32>) outs(%c : memref<192x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Nothing joins a product when that would lose a value: the columns and
// the accumulator are also returned, so the gather and the elementwise
// kernel stay as they are. The zero fill still goes: the product writes
// every element it filled.
// CHECK-LABEL: func.func @not_fused
// CHECK: linalg.generic {{.+}} outs(%[[COLS:.+]] : memref<4x16xf32>)
// CHECK: arith.negf
// CHECK-NOT: linalg.fill
// CHECK: vector.load %[[COLS]]
// CHECK: vector.store
// CHECK: linalg.generic
// CHECK: arith.maximumf
#na = affine_map<(m, k, n) -> (m, k)>
#nb = affine_map<(m, k, n) -> (k, n)>
#nc = affine_map<(m, k, n) -> (m, n)>
#n2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_fused(%a: memref<2x4xf32>, %x: memref<4x16xf32>)
    -> (memref<4x16xf32>, memref<2x16xf32>, memref<2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<4x16xf32>
  linalg.generic {indexing_maps = [#n2, #n2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x16xf32>) outs(%cols : memref<4x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  %acc = memref.alloc() : memref<2x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#na, #nb, #nc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %cols : memref<2x4xf32>, memref<4x16xf32>) outs(%acc : memref<2x16xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %s, %m : f32
    linalg.yield %r : f32
  }
  %out = memref.alloc() : memref<2x16xf32>
  linalg.generic {indexing_maps = [#n2, #n2], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<2x16xf32>) outs(%out : memref<2x16xf32>) {
  ^bb0(%y: f32, %o: f32):
    %relu = arith.maximumf %y, %zero : f32
    linalg.yield %relu : f32
  }
  return %cols, %acc, %out : memref<4x16xf32>, memref<2x16xf32>, memref<2x16xf32>
}

// -----

// An epilogue may read the product more than once: SiLU, x * sigmoid(x),
// runs on the accumulators for both.
// CHECK-LABEL: func.func @silu
// CHECK: %[[TILE:.+]]:2 = scf.for
// CHECK: %[[NEG:.+]] = arith.negf %[[TILE]]#0 : vector<8xf32>
// CHECK: %[[EXP:.+]] = math.exp %[[NEG]] : vector<8xf32>
// CHECK: %[[SIG:.+]] = arith.divf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: arith.mulf %[[TILE]]#0, %[[SIG]] : vector<8xf32>
// CHECK-NOT: linalg.generic
#sa = affine_map<(m, k, n) -> (m, k)>
#sb = affine_map<(m, k, n) -> (k, n)>
#sc = affine_map<(m, k, n) -> (m, n)>
#s2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @silu(%a: memref<1x4xf32>, %b: memref<4x16xf32>) -> memref<1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %acc = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#sa, #sb, #sc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x4xf32>, memref<4x16xf32>) outs(%acc : memref<1x16xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %s, %m : f32
    linalg.yield %r : f32
  }
  %out = memref.alloc() : memref<1x16xf32>
  linalg.generic {indexing_maps = [#s2, #s2, #s2], iterator_types = ["parallel", "parallel"]}
      ins(%acc, %acc : memref<1x16xf32>, memref<1x16xf32>) outs(%out : memref<1x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %n = arith.negf %y : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %g = arith.divf %one, %d : f32
    %s = arith.mulf %x, %g : f32
    linalg.yield %s : f32
  }
  return %out : memref<1x16xf32>
}

// -----

// An epilogue may write a contiguous slice of a bigger buffer (a Concat's
// part, its channels): the tile stores into the slice, its trailing
// dimensions collapsed, as into a buffer of its own.
// CHECK-LABEL: func.func @into_slice
// CHECK: %[[SLICE:.+]] = memref.subview %{{.+}}[0, 2, 0] [1, 2, 16] [1, 1, 1]
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: %[[RELU:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[RELU]], %[[SLICE]]
// CHECK-NOT: linalg.generic
#ia = affine_map<(m, k, n) -> (m, k)>
#ib = affine_map<(m, k, n) -> (k, n)>
#ic = affine_map<(m, k, n) -> (m, n)>
#i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @into_slice(%a: memref<2x4xf32>, %b: memref<4x16xf32>) -> memref<1x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<2x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#ia, #ib, #ic], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<2x4xf32>, memref<4x16xf32>) outs(%acc : memref<2x16xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %s, %m : f32
    linalg.yield %r : f32
  }
  %acc3 = memref.expand_shape %acc [[0, 1], [2]] output_shape [1, 2, 16] : memref<2x16xf32> into memref<1x2x16xf32>
  %all = memref.alloc() : memref<1x4x16xf32>
  %slice = memref.subview %all[0, 2, 0] [1, 2, 16] [1, 1, 1] : memref<1x4x16xf32> to memref<1x2x16xf32, strided<[64, 16, 1], offset: 32>>
  linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc3 : memref<1x2x16xf32>) outs(%slice : memref<1x2x16xf32, strided<[64, 16, 1], offset: 32>>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  }
  return %all : memref<1x4x16xf32>
}

// -----

// With a batch the slice is strided along its rows (a batch of Concat's
// parts, its channels): each row's columns are still one run of elements,
// and the tile stores there.
// CHECK-LABEL: func.func @into_strided_slice
// CHECK: %[[SLICE:.+]] = memref.subview %{{.+}}[0, 2, 0] [2, 2, 16] [1, 1, 1]
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: %[[RELU:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[RELU]], %[[SLICE]]
// CHECK-NOT: linalg.generic
#sa = affine_map<(m, k, n) -> (m, k)>
#sb = affine_map<(m, k, n) -> (k, n)>
#sc = affine_map<(m, k, n) -> (m, n)>
#s3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @into_strided_slice(%a: memref<4x4xf32>, %b: memref<4x16xf32>) -> memref<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#sa, #sb, #sc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<4x4xf32>, memref<4x16xf32>) outs(%acc : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %s, %m : f32
    linalg.yield %r : f32
  }
  %acc3 = memref.expand_shape %acc [[0, 1], [2]] output_shape [2, 2, 16] : memref<4x16xf32> into memref<2x2x16xf32>
  %all = memref.alloc() : memref<2x4x16xf32>
  %slice = memref.subview %all[0, 2, 0] [2, 2, 16] [1, 1, 1] : memref<2x4x16xf32> to memref<2x2x16xf32, strided<[64, 16, 1], offset: 32>>
  linalg.generic {indexing_maps = [#s3, #s3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc3 : memref<2x2x16xf32>) outs(%slice : memref<2x2x16xf32, strided<[64, 16, 1], offset: 32>>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  }
  return %all : memref<2x4x16xf32>
}

// -----

// B packed in panels of 32 columns by kiln-pack-weights: at 256 bits each
// task's 16 columns lie in panel column floordiv 32, from column mod 32,
// and B's vectors are read there, each prefetched 16 steps ahead (weights
// come from memory once a run holds more of them than the caches).
// CHECK-LABEL: func.func @packed(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4x3xf32>, %[[B:[a-z0-9]+]]: memref<2x3x32xf32>, %[[C:[a-z0-9]+]]: memref<4x64xf32>)
// CHECK: %[[COL:.+]] = arith.muli %{{.+}}, %[[C16:[a-z0-9]+]]
// CHECK: %[[PANEL:.+]] = arith.divui %[[COL]], %[[C32:[a-z0-9]+]]
// CHECK: %[[WITHIN:.+]] = arith.remui %[[COL]], %[[C32]]
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: vector.load %[[B]][%[[PANEL]], %[[K]], %[[WITHIN]]] : memref<2x3x32xf32>, vector<8xf32>
// CHECK: %[[AHEAD:.+]] = arith.addi %[[K]], %[[C16]]
// CHECK: memref.prefetch %[[B]][%[[PANEL]], %[[AHEAD]], %[[WITHIN]]], read, locality<3>, data
// CHECK: %[[WITHIN8:.+]] = arith.addi %[[WITHIN]], %{{.+}}
// CHECK: vector.load %[[B]][%[[PANEL]], %[[K]], %[[WITHIN8]]] : memref<2x3x32xf32>, vector<8xf32>
// CHECK: memref.prefetch %[[B]][%[[PANEL]], %{{.+}}, %{{.+}}], read, locality<3>, data
#a = affine_map<(m, k, n) -> (m, k)>
#packed = affine_map<(m, k, n) -> (n floordiv 32, k, n mod 32)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @packed(%a: memref<4x3xf32>, %b: memref<2x3x32xf32>, %c: memref<4x64xf32>) {
  linalg.generic {indexing_maps = [#a, #packed, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<4x3xf32>, memref<2x3x32xf32>) outs(%c : memref<4x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A packed in groups of 12 rows by kiln-pack-weights: at 256 bits a tile
// of 6 rows lies in group row floordiv 12, from row mod 12, and broadcasts
// its rows' elements of A from there, one contiguous stream prefetched 64
// steps ahead.
// CHECK-LABEL: func.func @row_groups(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<2x3x12xf32>
// CHECK: scf.for %[[ROW:[a-z0-9]+]] =
// CHECK: %[[GROUP:.+]] = arith.divui %[[ROW]], %[[C12:[a-z0-9]+]]
// CHECK: %[[FROM:.+]] = arith.remui %[[ROW]], %[[C12]]
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: %[[AHEAD:.+]] = arith.addi %[[K]], %[[C64:[a-z0-9]+]]
// CHECK: memref.prefetch %[[A]][%[[GROUP]], %[[AHEAD]], %[[FROM]]], read, locality<3>, data
// CHECK: memref.load %[[A]][%[[GROUP]], %[[K]], %[[FROM]]]
// CHECK: %[[NEXT:.+]] = arith.addi %[[FROM]], %{{.+}}
// CHECK: memref.load %[[A]][%[[GROUP]], %[[K]], %[[NEXT]]]
#grouped = affine_map<(m, k, n) -> (m floordiv 12, k, m mod 12)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @row_groups(%a: memref<2x3x12xf32>, %b: memref<3x16xf32>, %c: memref<24x16xf32>) {
  linalg.generic {indexing_maps = [#grouped, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<2x3x12xf32>, memref<3x16xf32>) outs(%c : memref<24x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}


// -----

// A parallel product of too few column tiles to keep threads evenly busy
// (2, with 33 whole tiles of 6 rows and 2 rows more) splits its rows into
// 4 blocks of 9 tiles: 8 tasks. The last block stops at the last whole
// tile, then computes the 2 rows past it.
// CHECK-LABEL: func.func @ragged_row_blocks
// CHECK-DAG: %[[C9:.+]] = arith.constant 9 : index
// CHECK-DAG: %[[C33:.+]] = arith.constant 33 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK: scf.forall (%[[TASK:[a-z0-9]+]]) in (8) {
// CHECK: %[[BLOCK:.+]] = arith.remui %[[TASK]], %{{.+}} : index
// CHECK: %[[FIRST:.+]] = arith.muli %[[BLOCK]], %[[C9]] : index
// CHECK: %[[NEXT:.+]] = arith.addi %[[FIRST]], %[[C9]] : index
// CHECK: %[[END:.+]] = arith.minui %[[NEXT]], %[[C33]] : index
// CHECK: scf.for %{{.+}} = %[[FIRST]] to %[[END]] step
// CHECK-COUNT-12: vector.fma
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %[[BLOCK]], %[[C3]] : index
// CHECK: scf.if %[[LAST]] {
// CHECK-COUNT-4: vector.fma
#ga = affine_map<(m, k, n) -> (m, k)>
#gb = affine_map<(m, k, n) -> (k, n)>
#gc = affine_map<(m, k, n) -> (m, n)>
func.func @ragged_row_blocks(%a: memref<200x64xf32>, %b: memref<64x30xf32>, %c: memref<200x30xf32>) {
  linalg.generic {indexing_maps = [#ga, #gb, #gc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<200x64xf32>, memref<64x30xf32>) outs(%c : memref<200x30xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A in row groups and C from zero: the 2 columns past the last whole
// vector (26 = 16 + 8 + 2 at 256 bits) are summed across the tile's 6 rows, a
// masked vector of A's group a step times each column's element of B, in
// the same steps as the whole vector's. Lane r of column j's sum is row
// r's: each row's 2 columns are gathered into one vector, stored masked.
// CHECK-LABEL: func.func @across_rows(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<1x3x12xf32>
// CHECK: %[[PANEL:.+]] = memref.alloca()
// CHECK: scf.if
// CHECK: %[[ROWS:.+]] = vector.constant_mask [6] : vector<8xi1>
// CHECK: %[[SUMS:.+]]:8 = scf.for %[[K:[a-z0-9]+]] =
// CHECK-COUNT-6: vector.fma
// CHECK: %[[GROUP:.+]] = vector.maskedload %[[A]][%{{.+}}, %[[K]], %{{.+}}], %[[ROWS]]
// CHECK: %[[B0:.+]] = memref.load %[[PANEL]][%[[K]], %[[C8:.+]]]
// CHECK: %[[S0:.+]] = vector.broadcast %[[B0]]
// CHECK: vector.fma %[[GROUP]], %[[S0]]
// CHECK: %[[B1:.+]] = memref.load %[[PANEL]][%[[K]], %[[C9:.+]]]
// CHECK: %[[S1:.+]] = vector.broadcast %[[B1]]
// CHECK: vector.fma %[[GROUP]], %[[S1]]
// CHECK: %[[L0:.+]] = vector.extract %[[SUMS]]#6[0]
// CHECK: %[[V0:.+]] = vector.insert %[[L0]], %{{.+}} [0]
// CHECK: %[[L1:.+]] = vector.extract %[[SUMS]]#7[0]
// CHECK: vector.insert %[[L1]], %[[V0]] [1]
// CHECK: vector.maskedstore
#xa = affine_map<(m, k, n) -> (m floordiv 12, k, m mod 12)>
#xb = affine_map<(m, k, n) -> (k, n)>
#xc = affine_map<(m, k, n) -> (m, n)>
func.func @across_rows(%a: memref<1x3x12xf32>, %b: memref<3x26xf32>) -> memref<12x26xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<12x26xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<12x26xf32>)
  linalg.generic {indexing_maps = [#xa, #xb, #xc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x3x12xf32>, memref<3x26xf32>) outs(%c : memref<12x26xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return %c : memref<12x26xf32>
}

// -----

// With no whole vector of columns in the tile (18 = 16 + 2), the columns
// summed across the rows take a loop of their own, each column in 4
// chains of steps (8 FMAs in flight), added at the end.
// CHECK-LABEL: func.func @across_chains(
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C4]] iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-6: arith.addf %{{.+}}, %{{.+}} : vector<8xf32>
#ya = affine_map<(m, k, n) -> (m floordiv 12, k, m mod 12)>
#yb = affine_map<(m, k, n) -> (k, n)>
#yc = affine_map<(m, k, n) -> (m, n)>
func.func @across_chains(%a: memref<1x8x12xf32>, %b: memref<8x18xf32>) -> memref<12x18xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<12x18xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<12x18xf32>)
  linalg.generic {indexing_maps = [#ya, #yb, #yc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x8x12xf32>, memref<8x18xf32>) outs(%c : memref<12x18xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return %c : memref<12x18xf32>
}

// -----

// A copied B whose rows are few (8) fills more of a panel: with 16 tiles
// of 16 columns at 256 bits, each of 8 tasks copies 32 columns, and each
// tile of rows runs over the task's 2 tiles of columns, reading the panel
// from the tile's offset in it. Each step of a tile fetches the line of
// B's row that the task two later copies (64 columns on), into L2.
// CHECK-LABEL: func.func @task_tiles(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<12x8xf32>, %[[B:[a-z0-9]+]]: memref<8x256xf32>
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: %[[PANEL:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x32xf32>
// CHECK: scf.for %[[TASK:[a-z0-9]+]] =
// CHECK: %[[FIRST:.+]] = arith.muli %[[TASK]], %[[C32]] : index
// CHECK: vector.store %{{.+}}, %[[PANEL]]
// CHECK: scf.for %[[ROW:[a-z0-9]+]] =
// CHECK: scf.for %[[OFFSET:[a-z0-9]+]] = %{{.+}} to %[[C32]] step %[[C16]] {
// CHECK: %[[COLUMN:.+]] = arith.addi %[[FIRST]], %[[OFFSET]] : index
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: vector.load %[[PANEL]][%[[K]], %[[OFFSET]]]
// CHECK: %[[AHEAD:.+]] = arith.addi %[[COLUMN]], %[[C64]] : index
// CHECK: memref.prefetch %[[B]][%[[K]], %[[AHEAD]]], read, locality<2>, data
#ta = affine_map<(m, k, n) -> (m, k)>
#tb = affine_map<(m, k, n) -> (k, n)>
#tc = affine_map<(m, k, n) -> (m, n)>
func.func @task_tiles(%a: memref<12x8xf32>, %b: memref<8x256xf32>, %c: memref<12x256xf32>) {
  linalg.generic {indexing_maps = [#ta, #tb, #tc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<12x8xf32>, memref<8x256xf32>) outs(%c : memref<12x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same over an image a run gives (its height and width, and so the
// product's columns): each task of a tile of columns computes its panel
// from the input's rows as at a static size, the lanes past the run's
// columns masked, and gathers at the image's edges with 64-bit offsets.
// CHECK-LABEL: func.func @shifted_image
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[TASK:[a-z0-9]+]]) in
// CHECK: arith.divui %{{.+}}, %{{.+}} : vector<8xi32>
// CHECK: vector.create_mask %{{.+}} : vector<8xi1>
// CHECK: scf.for %[[C:[a-z0-9]+]] =
// CHECK: %[[ROW:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: vector.maskedload %{{.+}}[%{{.+}}], %{{.+}}, %{{.+}} : memref<?xf32, strided<[1]>>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: } else {
// CHECK: vector.gather %{{.+}} : memref<?xf32, strided<[1], offset: ?>>, vector<8xi64>
// CHECK: vector.store %[[ROW]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<18x16xf32>, vector<8xf32>
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
#hd = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
#hw = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#hx = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#hy = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
func.func @shifted_image(%x: memref<1x2x?x?xf32>, %w: memref<1x4x18xf32>, %h: index, %wd: index) -> memref<1x4x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc(%h, %wd) : memref<1x1x2x3x3x?x?xf32>
  linalg.generic {indexing_maps = [#hd], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      outs(%cols : memref<1x1x2x3x3x?x?xf32>) attrs = {kiln.im2col_shift = array<i64: 1, 1, 1>} {
  ^bb0(%out: f32):
    %c = linalg.index 2 : index
    %kh = linalg.index 3 : index
    %kw = linalg.index 4 : index
    %oh = linalg.index 5 : index
    %ow = linalg.index 6 : index
    %h0 = arith.addi %oh, %kh : index
    %hi = arith.subi %h0, %c1 : index
    %w0 = arith.addi %ow, %kw : index
    %wi = arith.subi %w0, %c1 : index
    %hl = arith.cmpi sge, %hi, %c0 : index
    %hh = arith.cmpi slt, %hi, %h : index
    %wl = arith.cmpi sge, %wi, %c0 : index
    %wh = arith.cmpi slt, %wi, %wd : index
    %in0 = arith.andi %hl, %hh : i1
    %in1 = arith.andi %wl, %wh : i1
    %in = arith.andi %in0, %in1 : i1
    %hs = arith.select %in0, %hi, %c0 : index
    %ws = arith.select %in1, %wi, %c0 : index
    %v = memref.load %x[%c0, %c, %hs, %ws] : memref<1x2x?x?xf32>
    %cell = arith.select %in, %v, %zero : f32
    linalg.yield %cell : f32
  }
  %all = memref.collapse_shape %cols [[0, 1, 2, 3, 4, 5, 6]] : memref<1x1x2x3x3x?x?xf32> into memref<?xf32>
  %positions = arith.muli %h, %wd : index
  %columns = memref.expand_shape %all [[0, 1, 2, 3]] output_shape [1, 1, 18, %positions] : memref<?xf32> into memref<1x1x18x?xf32>
  %acc = memref.alloc(%h, %wd) : memref<1x4x?x?xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x4x?x?xf32>)
  %flat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<1x4x?x?xf32> into memref<?xf32>
  %grouped = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 1, 4, %positions] : memref<?xf32> into memref<1x1x4x?xf32>
  linalg.generic {indexing_maps = [#hw, #hx, #hy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %columns : memref<1x4x18xf32>, memref<1x1x18x?xf32>) outs(%grouped : memref<1x1x4x?xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  return %acc : memref<1x4x?x?xf32>
}

// -----

// A 3x3 convolution at stride 2 (kiln.im2col_shift = [1, 1, 2]) whose
// output rows (8) are whole vectors at 256 bits: each task computes, once,
// which of its window's input rows lie inside the input and each window
// column's mask, spread to the even lanes of two loads; each row of its
// panel is then two masked loads of the input's row and their even lanes,
// gathered only where they would start before the input or end after it
// or the row is padding.
// CHECK-LABEL: func.func @even_rows
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1, 2, 3]] : memref<1x2x16x16xf32> into memref<512xf32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 8, 1, 8, 2, 8, 3, 8] : vector<8xi1>, vector<8xi1>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [4, 8, 5, 8, 6, 8, 7, 8] : vector<8xi1>, vector<8xi1>
// CHECK: scf.for %[[C:[a-z0-9]+]] =
// CHECK: %[[ROW:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: %[[LOW:.+]] = vector.maskedload %[[FLAT]][%{{.+}}], %{{.+}}, %{{.+}} : memref<512xf32>
// CHECK: %[[HIGH:.+]] = vector.maskedload %[[FLAT]][%{{.+}}], %{{.+}}, %{{.+}} : memref<512xf32>
// CHECK: vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK: } else {
// CHECK: vector.gather %{{.+}} : memref<512xf32, strided<[1]>>
// CHECK: vector.store %[[ROW]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<18x16xf32>, vector<8xf32>
// CHECK: vector.fma
#ed = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
#ew = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#ex = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#ey = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
func.func @even_rows(%x: memref<1x2x16x16xf32>, %w: memref<1x4x18xf32>) -> memref<1x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<1x1x2x3x3x8x8xf32>
  linalg.generic {indexing_maps = [#ed], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      outs(%cols : memref<1x1x2x3x3x8x8xf32>) attrs = {kiln.im2col_shift = array<i64: 1, 1, 2>} {
  ^bb0(%out: f32):
    %c = linalg.index 2 : index
    %kh = linalg.index 3 : index
    %kw = linalg.index 4 : index
    %oh = linalg.index 5 : index
    %ow = linalg.index 6 : index
    %oh2 = arith.muli %oh, %c2 : index
    %h0 = arith.addi %oh2, %kh : index
    %h = arith.subi %h0, %c1 : index
    %ow2 = arith.muli %ow, %c2 : index
    %w0 = arith.addi %ow2, %kw : index
    %wi = arith.subi %w0, %c1 : index
    %hl = arith.cmpi sge, %h, %c0 : index
    %hh = arith.cmpi slt, %h, %c16 : index
    %wl = arith.cmpi sge, %wi, %c0 : index
    %wh = arith.cmpi slt, %wi, %c16 : index
    %in0 = arith.andi %hl, %hh : i1
    %in1 = arith.andi %wl, %wh : i1
    %in = arith.andi %in0, %in1 : i1
    %hs = arith.select %in0, %h, %c0 : index
    %ws = arith.select %in1, %wi, %c0 : index
    %v = memref.load %x[%c0, %c, %hs, %ws] : memref<1x2x16x16xf32>
    %cell = arith.select %in, %v, %zero : f32
    linalg.yield %cell : f32
  }
  %columns = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<1x1x2x3x3x8x8xf32> into memref<1x1x18x64xf32>
  %acc = memref.alloc() : memref<1x4x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x4x8x8xf32>)
  %flat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<1x4x8x8xf32> into memref<256xf32>
  %grouped = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 1, 4, 64] : memref<256xf32> into memref<1x1x4x64xf32>
  linalg.generic {indexing_maps = [#ew, #ex, #ey], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %columns : memref<1x4x18xf32>, memref<1x1x18x64xf32>) outs(%grouped : memref<1x1x4x64xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  return %acc : memref<1x4x8x8xf32>
}

// -----

// The same at output rows of 7 (ResNet's last downsampling) and a batch a
// run gives: a vector of 8 columns holds two output rows, each a segment
// of its lanes loaded as above from its own input rows, and the second,
// where it has lanes, joins the first by its mask.
// CHECK-LABEL: func.func @even_rows_across
// CHECK: scf.for %[[C:[a-z0-9]+]] =
// CHECK: %[[FIRST:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK: %[[ROW:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: %[[SECOND:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK: %[[JOINED:.+]] = arith.select %{{.+}}, %[[SECOND]], %[[FIRST]] : vector<8xi1>, vector<8xf32>
// CHECK: scf.yield %[[JOINED]]
// CHECK: } else {
// CHECK: scf.yield %[[FIRST]]
// CHECK: vector.store %[[ROW]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<18x{{[0-9]+}}xf32>, vector<8xf32>
// CHECK: vector.fma
#fd = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
#fw = affine_map<(n, g, f, o, ck) -> (g, f, ck)>
#fx = affine_map<(n, g, f, o, ck) -> (n, g, ck, o)>
#fy = affine_map<(n, g, f, o, ck) -> (n, g, f, o)>
func.func @even_rows_across(%x: memref<?x2x14x14xf32>, %w: memref<1x4x18xf32>) -> memref<?x4x7x7xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c14 = arith.constant 14 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x2x14x14xf32>
  %cols = memref.alloc(%n) : memref<?x1x2x3x3x7x7xf32>
  linalg.generic {indexing_maps = [#fd], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      outs(%cols : memref<?x1x2x3x3x7x7xf32>) attrs = {kiln.im2col_shift = array<i64: 1, 1, 2>} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %c = linalg.index 2 : index
    %kh = linalg.index 3 : index
    %kw = linalg.index 4 : index
    %oh = linalg.index 5 : index
    %ow = linalg.index 6 : index
    %oh2 = arith.muli %oh, %c2 : index
    %h0 = arith.addi %oh2, %kh : index
    %h = arith.subi %h0, %c1 : index
    %ow2 = arith.muli %ow, %c2 : index
    %w0 = arith.addi %ow2, %kw : index
    %wi = arith.subi %w0, %c1 : index
    %hl = arith.cmpi sge, %h, %c0 : index
    %hh = arith.cmpi slt, %h, %c14 : index
    %wl = arith.cmpi sge, %wi, %c0 : index
    %wh = arith.cmpi slt, %wi, %c14 : index
    %in0 = arith.andi %hl, %hh : i1
    %in1 = arith.andi %wl, %wh : i1
    %in = arith.andi %in0, %in1 : i1
    %hs = arith.select %in0, %h, %c0 : index
    %ws = arith.select %in1, %wi, %c0 : index
    %v = memref.load %x[%i, %c, %hs, %ws] : memref<?x2x14x14xf32>
    %cell = arith.select %in, %v, %zero : f32
    linalg.yield %cell : f32
  }
  %columns = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<?x1x2x3x3x7x7xf32> into memref<?x1x18x49xf32>
  %acc = memref.alloc(%n) : memref<?x4x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x4x7x7xf32>)
  %flat = memref.collapse_shape %acc [[0], [1, 2, 3]] : memref<?x4x7x7xf32> into memref<?x196xf32>
  %grouped = memref.expand_shape %flat [[0], [1, 2, 3]] output_shape [%n, 1, 4, 49] : memref<?x196xf32> into memref<?x1x4x49xf32>
  linalg.generic {indexing_maps = [#fw, #fx, #fy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %columns : memref<1x4x18xf32>, memref<?x1x18x49xf32>) outs(%grouped : memref<?x1x4x49xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  return %acc : memref<?x4x7x7xf32>
}

// -----

#a = affine_map<(b, m, k, n) -> (b, m, k)>
#b = affine_map<(b, m, k, n) -> (k, n)>
#c = affine_map<(b, m, k, n) -> (b, m, n)>
#row = affine_map<(b, m, n) -> (b, m, n)>
#bias = affine_map<(b, m, n) -> (n)>

// Rows and a batch a run gives (batch x sequence rows over weights of 16
// columns): one task per batch index and tile of columns, counted from the
// run's batch; each task runs the whole tiles of rows, then the rows past
// them as tiles of 4, 2 and 1 rows where the remainder has that bit. The
// bias joins the accumulators as it does at static sizes.
// CHECK-LABEL: func.func @run_rows(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<?x?x8xf32>, %[[B:[a-z0-9]+]]: memref<8x16xf32>, %{{.+}}: memref<16xf32>) -> memref<?x?x16xf32>
// CHECK: memref.alloc(
// CHECK-DAG: %[[ROWS:.+]] = memref.dim %[[A]], %c1
// CHECK-DAG: %[[BATCH:.+]] = memref.dim %[[A]], %c0
// CHECK: scf.forall (%[[TASK:.+]]) in (%[[BATCH]])
// CHECK: %[[WHOLE_TILES:.+]] = arith.divui %[[ROWS]], %c6
// CHECK: %[[WHOLE:.+]] = arith.muli %[[WHOLE_TILES]], %c6
// CHECK: scf.for %{{.+}} = %c0 to %[[WHOLE]] step %c6
// CHECK-COUNT-12: vector.fma
// CHECK: %[[LEFT:.+]] = arith.subi %[[ROWS]], %[[WHOLE]]
// CHECK: %[[FOUR:.+]] = arith.andi %[[LEFT]], %c4
// CHECK: %[[HAS_FOUR:.+]] = arith.cmpi ne, %[[FOUR]], %c0
// CHECK: scf.if %[[HAS_FOUR]]
// CHECK-COUNT-8: vector.fma
// CHECK: scf.if
// CHECK-COUNT-4: vector.fma
// CHECK: scf.if
// CHECK-COUNT-2: vector.fma
// CHECK-NOT: linalg.generic
func.func @run_rows(%x: memref<?x?x8xf32>, %w: memref<8x16xf32>, %bias: memref<16xf32>) -> memref<?x?x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %batch = memref.dim %x, %c0 : memref<?x?x8xf32>
  %rows = memref.dim %x, %c1 : memref<?x?x8xf32>
  %acc = memref.alloc(%batch, %rows) : memref<?x?x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x?x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<?x?x8xf32>, memref<8x16xf32>) outs(%acc : memref<?x?x16xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  %y = memref.alloc(%batch, %rows) : memref<?x?x16xf32>
  linalg.generic {indexing_maps = [#row, #bias, #row], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %bias : memref<?x?x16xf32>, memref<16xf32>) outs(%y : memref<?x?x16xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %r = arith.addf %v, %t : f32
    linalg.yield %r : f32
  }
  return %y : memref<?x?x16xf32>
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

// Attention's probabilities times its values, over keys a run gives: the
// reduction runs to the run's length, reading B where it lies (a panel
// would be the run's size).
// CHECK-LABEL: func.func @run_keys(
// CHECK-SAME: %[[P:[a-z0-9]+]]: memref<?x?xf32>, %[[V:[a-z0-9]+]]: memref<?x16xf32>, %[[O:[a-z0-9]+]]: memref<?x16xf32>)
// CHECK-NOT: memref.alloca
// CHECK: %[[KEYS:.+]] = memref.dim %[[P]], %c1
// CHECK: scf.for %{{.+}} = %c0 to %[[KEYS]] step %c1 iter_args(
// CHECK: vector.load %[[V]]
func.func @run_keys(%p: memref<?x?xf32>, %v: memref<?x16xf32>, %o: memref<?x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<?x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%p, %v : memref<?x?xf32>, memref<?x16xf32>) outs(%o : memref<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  return
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

// Attention's scores over keys a run gives as the columns: a task a tile
// of two vectors of columns, counted from the run's keys; the last task's
// vectors are masked to the columns left (none in a vector past them).
// CHECK-LABEL: func.func @run_columns(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x16xf32>, %[[K:[a-z0-9]+]]: memref<16x?xf32>, %[[S:[a-z0-9]+]]: memref<?x?xf32>)
// CHECK: %[[KEYS:.+]] = memref.dim %[[K]], %c1
// CHECK: %[[TASKS:.+]] = arith.ceildivui %[[KEYS]], %c16
// CHECK: scf.forall (%[[TASK:.+]]) in (%{{.+}})
// CHECK: %[[COLUMN:.+]] = arith.muli %{{.+}}, %c16
// CHECK: %[[LEFT:.+]] = arith.subi %[[KEYS]], %[[COLUMN]]
// CHECK: %[[FIRST:.+]] = arith.minsi %[[LEFT]], %c8
// CHECK: vector.create_mask %[[FIRST]] : vector<8xi1>
// CHECK: vector.maskedload %[[K]]
// CHECK: vector.maskedstore %[[S]]
func.func @run_columns(%q: memref<?x16xf32>, %k: memref<16x?xf32>, %s: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<?x?xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%q, %k : memref<?x16xf32>, memref<16x?xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  }
  return
}

// -----

#fw = affine_map<(n, g, f, o, c) -> (g, f, c)>
#fx = affine_map<(n, g, f, o, c) -> (n, g, c, o)>
#fy = affine_map<(n, g, f, o, c) -> (n, g, f, o)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>

// A 1x1 convolution over a batch a run gives, its bias and ReLU after:
// the product's rows (batch, group, filter) are the epilogue's (batch,
// channel) through C's reshapes, which the run's size changes only in the
// batch, so the epilogue joins the register tiles, reading the bias by
// channel, and nothing is left for the accumulator's buffer.
// CHECK-LABEL: func.func @run_batch_epilogue(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x8x10x10xf32>, %{{.+}}: memref<1x16x8xf32>, %[[BIAS:[a-z0-9]+]]: memref<16xf32>, %[[BATCH:[a-z0-9]+]]: index)
// CHECK-NOT: linalg.fill
// CHECK: memref.alloc(%[[BATCH]]) : memref<?x16x10x10xf32>
// CHECK-NOT: memref.alloc(
// CHECK: scf.forall
// CHECK: vector.fma
// CHECK: memref.load %[[BIAS]]
// CHECK: arith.maximumf
// CHECK: } {kiln.flops = 0 : i64, kiln.kernel = "matmul"}
// CHECK-NOT: linalg.generic
func.func @run_batch_epilogue(%x: memref<?x8x10x10xf32>, %w: memref<1x16x8xf32>, %bias: memref<16xf32>,
                              %n: index) -> memref<?x16x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %xflat = memref.collapse_shape %x [[0, 1, 2, 3]] : memref<?x8x10x10xf32> into memref<?xf32>
  %xg = memref.expand_shape %xflat [[0, 1, 2, 3]] output_shape [%n, 1, 8, 100] : memref<?xf32> into memref<?x1x8x100xf32>
  %acc = memref.alloc(%n) : memref<?x16x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x16x10x10xf32>)
  %aflat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<?x16x10x10xf32> into memref<?xf32>
  %ag = memref.expand_shape %aflat [[0, 1, 2, 3]] output_shape [%n, 1, 16, 100] : memref<?xf32> into memref<?x1x16x100xf32>
  linalg.generic {indexing_maps = [#fw, #fx, #fy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %xg : memref<1x16x8xf32>, memref<?x1x8x100xf32>) outs(%ag : memref<?x1x16x100xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  %y = memref.alloc(%n) : memref<?x16x10x10xf32>
  linalg.generic {indexing_maps = [#id4, #channel, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc, %bias : memref<?x16x10x10xf32>, memref<16xf32>) outs(%y : memref<?x16x10x10xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s1 = arith.addf %v, %b : f32
    %r = arith.maximumf %s1, %zero : f32
    linalg.yield %r : f32
  }
  return %y : memref<?x16x10x10xf32>
}

// -----

#fw = affine_map<(n, g, f, o, c) -> (g, f, c)>
#fx = affine_map<(n, g, f, o, c) -> (n, g, c, o)>
#fy = affine_map<(n, g, f, o, c) -> (n, g, f, o)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>

// The same over an image a run gives too: C's columns (the output
// positions, height x width) are the epilogue's last two dimensions, which
// it sees as one; the residual it adds is read along them, a masked vector
// at the end of each row of C.
// CHECK-LABEL: func.func @run_image_epilogue(
// CHECK-SAME: %{{.+}}: memref<?x8x?x?xf32>, %{{.+}}: memref<1x16x8xf32>, %[[BIAS:[a-z0-9]+]]: memref<16xf32>, %[[RES:[a-z0-9]+]]: memref<?x16x?x?xf32>
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[RESCOLUMNS:.+]] = memref.collapse_shape %[[RES]] {{\[}}[0], [1], [2, 3]] : memref<?x16x?x?xf32> into memref<?x16x?xf32>
// CHECK-DAG: %[[YCOLUMNS:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<?x16x?x?xf32> into memref<?x16x?xf32>
// CHECK: scf.forall
// CHECK: vector.fma
// CHECK: memref.load %[[BIAS]]
// CHECK: vector.maskedload %[[RESCOLUMNS]]
// CHECK: vector.maskedstore %[[YCOLUMNS]]
// CHECK: } {kiln.flops = 0 : i64, kiln.kernel = "matmul"}
// CHECK-NOT: linalg.generic
func.func @run_image_epilogue(%x: memref<?x8x?x?xf32>, %w: memref<1x16x8xf32>, %bias: memref<16xf32>,
                              %res: memref<?x16x?x?xf32>, %n: index, %h: index, %wd: index)
    -> memref<?x16x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %positions = arith.muli %h, %wd : index
  %xflat = memref.collapse_shape %x [[0, 1, 2, 3]] : memref<?x8x?x?xf32> into memref<?xf32>
  %xg = memref.expand_shape %xflat [[0, 1, 2, 3]] output_shape [%n, 1, 8, %positions] : memref<?xf32> into memref<?x1x8x?xf32>
  %acc = memref.alloc(%n, %h, %wd) : memref<?x16x?x?xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x16x?x?xf32>)
  %aflat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<?x16x?x?xf32> into memref<?xf32>
  %ag = memref.expand_shape %aflat [[0, 1, 2, 3]] output_shape [%n, 1, 16, %positions] : memref<?xf32> into memref<?x1x16x?xf32>
  linalg.generic {indexing_maps = [#fw, #fx, #fy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %xg : memref<1x16x8xf32>, memref<?x1x8x?xf32>) outs(%ag : memref<?x1x16x?xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  }
  %y = memref.alloc(%n, %h, %wd) : memref<?x16x?x?xf32>
  linalg.generic {indexing_maps = [#id4, #channel, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc, %bias, %res : memref<?x16x?x?xf32>, memref<16xf32>, memref<?x16x?x?xf32>) outs(%y : memref<?x16x?x?xf32>) {
  ^bb0(%v: f32, %b: f32, %r: f32, %o: f32):
    %s1 = arith.addf %v, %b : f32
    %s2 = arith.addf %s1, %r : f32
    linalg.yield %s2 : f32
  }
  return %y : memref<?x16x?x?xf32>
}

// -----

#fw = affine_map<(n, g, f, o, c) -> (g, f, c)>
#fx = affine_map<(n, g, f, o, c) -> (n, g, c, o)>
#fy = affine_map<(n, g, f, o, c) -> (n, g, f, o)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Where nothing shows that C's batch is the epilogue's, its rows could
// hold other columns than C's: the epilogue stays a kernel of its own.
// CHECK-LABEL: func.func @run_image_other_batch(
// CHECK: kiln.kernel = "matmul"
// CHECK: linalg.generic
func.func @run_image_other_batch(%x: memref<?x8x?x?xf32>, %w: memref<1x16x8xf32>, %n: index,
                                 %m: index, %h: index, %wd: index) -> memref<?x16x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %positions = arith.muli %h, %wd : index
  %xflat = memref.collapse_shape %x [[0, 1, 2, 3]] : memref<?x8x?x?xf32> into memref<?xf32>
  %xg = memref.expand_shape %xflat [[0, 1, 2, 3]] output_shape [%n, 1, 8, %positions] : memref<?xf32> into memref<?x1x8x?xf32>
  %acc = memref.alloc(%m, %h, %wd) : memref<?x16x?x?xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x16x?x?xf32>)
  %aflat = memref.collapse_shape %acc [[0, 1, 2, 3]] : memref<?x16x?x?xf32> into memref<?xf32>
  %ag = memref.expand_shape %aflat [[0, 1, 2, 3]] output_shape [%n, 1, 16, %positions] : memref<?xf32> into memref<?x1x16x?xf32>
  linalg.generic {indexing_maps = [#fw, #fx, #fy], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %xg : memref<1x16x8xf32>, memref<?x1x8x?xf32>) outs(%ag : memref<?x1x16x?xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %mul = arith.mulf %p, %q : f32
    %a = arith.addf %s, %mul : f32
    linalg.yield %a : f32
  }
  %y = memref.alloc(%m, %h, %wd) : memref<?x16x?x?xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x16x?x?xf32>) outs(%y : memref<?x16x?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %y : memref<?x16x?x?xf32>
}
