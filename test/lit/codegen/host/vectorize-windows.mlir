// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-windows{vector-bits=256}),canonicalize)' | FileCheck %s
// RUN: not kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-windows{vector-bits=96}))' 2>&1 | FileCheck %s --check-prefix=BITS

// BITS: kiln-vectorize-windows: vector-bits must be 128, 256 or 512, not 96

// A depthwise 3x3 convolution in NCHW, padded by 1, with its bias: rows of
// 20 outputs go as two whole vectors of 8 and a masked one of 4. The window
// loops carry vectors; the weight is one scalar broadcast. Where the
// column check holds for the first and the last lane (w + kw - 1 and
// w + kw + 6 inside 0..19), the read is one vector load at w + kw - 1 and
// only the row check, the same in every lane, selects it; at the edges the
// lanes inside read with a masked load at that same place.
// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x2x6x20xf32>, %[[W:[a-z0-9]+]]: memref<2x1x3x3xf32>, %[[B:[a-z0-9]+]]: memref<2xf32>, %[[Y:[a-z0-9]+]]: memref<1x2x6x20xf32>)
// CHECK: scf.for %[[C:[a-z0-9]+]] =
// CHECK: scf.for %[[OH:[a-z0-9]+]] =
// CHECK: scf.for %[[OW:[a-z0-9]+]] = %{{.+}} to %[[C16:.+]] step %[[C8:[a-z0-9]+]] {
// CHECK: %[[BIAS:.+]] = memref.load %[[B]][%[[C]]] : memref<2xf32>
// CHECK: scf.for %[[KH:[a-z0-9]+]] = {{.+}} -> (vector<8xf32>)
// CHECK: scf.for %[[KW:[a-z0-9]+]] = {{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (vector<8xf32>)
// CHECK: %[[COLUMN:.+]] = arith.addi %[[OW]], %[[KW]] : index
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: %[[READ:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: %[[ROW:.+]] = arith.andi
// CHECK: %[[V:.+]] = vector.load %[[X]][%{{.+}}, %[[C]], %{{.+}}, %{{.+}}] : memref<1x2x6x20xf32>, vector<8xf32>
// CHECK: %[[CELL:.+]] = arith.select %[[ROW]], %[[V]], %{{.+}} : vector<8xf32>
// CHECK: scf.yield %[[CELL]]
// CHECK: } else {
// CHECK: %[[COLUMNS:.+]] = arith.andi %{{.+}}, %{{.+}} : vector<8xi1>
// CHECK: %[[ROWS:.+]] = vector.broadcast %{{.+}} : i1 to vector<8xi1>
// CHECK: %[[LANES:.+]] = arith.andi %[[ROWS]], %[[COLUMNS]] : vector<8xi1>
// CHECK: %[[EDGE:.+]] = vector.maskedload %[[X]][%{{.+}}, %[[C]], %{{.+}}, %{{.+}}], %[[LANES]], %{{.+}}
// CHECK: arith.select %[[LANES]], %[[EDGE]], %{{.+}} : vector<8xi1>, vector<8xf32>
// CHECK-NOT: vector.gather
// CHECK: %[[WEIGHT:.+]] = memref.load %[[W]][%[[C]], %{{.+}}, %[[KH]], %[[KW]]]
// CHECK: %[[WEIGHTS:.+]] = vector.broadcast %[[WEIGHT]] : f32 to vector<8xf32>
// CHECK: %[[P:.+]] = arith.mulf %[[READ]], %[[WEIGHTS]] : vector<8xf32>
// CHECK: arith.addf %[[ACC]], %[[P]] : vector<8xf32>
// CHECK: vector.broadcast %[[BIAS]] : f32 to vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[Y]][%{{.+}}, %[[C]], %[[OH]], %[[OW]]]
// CHECK: %[[TAIL:.+]] = vector.constant_mask [4] : vector<8xi1>
// CHECK: vector.maskedstore %[[Y]][%{{.+}}, %[[C]], %[[OH]], %[[C16]]], %[[TAIL]]
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @depthwise(%x: memref<1x2x6x20xf32>, %w: memref<2x1x3x3xf32>, %bias: memref<2xf32>, %y: memref<1x2x6x20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c20 = arith.constant 20 : index
  %zero = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [#channel, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<2xf32>) outs(%y : memref<1x2x6x20xf32>) {
  ^bb0(%b: f32, %out: f32):
    %c = linalg.index 1 : index
    %oh = linalg.index 2 : index
    %ow = linalg.index 3 : index
    %sum = scf.for %kh = %c0 to %c3 step %c1 iter_args(%outer = %zero) -> (f32) {
      %inner = scf.for %kw = %c0 to %c3 step %c1 iter_args(%acc = %outer) -> (f32) {
        %h0 = arith.addi %oh, %kh : index
        %h = arith.subi %h0, %c1 : index
        %hlow = arith.cmpi sge, %h, %c0 : index
        %hhigh = arith.cmpi slt, %h, %c6 : index
        %hin = arith.andi %hlow, %hhigh : i1
        %hc = arith.select %hin, %h, %c0 : index
        %w0 = arith.addi %ow, %kw : index
        %wp = arith.subi %w0, %c1 : index
        %wlow = arith.cmpi sge, %wp, %c0 : index
        %whigh = arith.cmpi slt, %wp, %c20 : index
        %win = arith.andi %wlow, %whigh : i1
        %wc = arith.select %win, %wp, %c0 : index
        %inside = arith.andi %hin, %win : i1
        %v = memref.load %x[%c0, %c, %hc, %wc] : memref<1x2x6x20xf32>
        %cell = arith.select %inside, %v, %zero : f32
        %weight = memref.load %w[%c, %c0, %kh, %kw] : memref<2x1x3x3xf32>
        %p = arith.mulf %cell, %weight : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      scf.yield %inner : f32
    }
    %r = arith.addf %sum, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// At stride 2 (a max over 3 with no padding) lane j reads 2 * (w + j) + k:
// the even elements of 16 from 2 * w + k, read as a vector and a masked
// vector of 7 (the 16th is never used); the last 4 outputs read 7.
// CHECK-LABEL: func.func @stride2(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x41xf32>
// CHECK: scf.for {{.+}} -> (vector<8xf32>)
// CHECK: %[[LOW:.+]] = vector.load %[[X]]
// CHECK: %[[SEVEN:.+]] = vector.constant_mask [7] : vector<8xi1>
// CHECK: %[[HIGH:.+]] = vector.maskedload %[[X]][%{{.+}}, %{{.+}}], %[[SEVEN]]
// CHECK: %[[EVENS:.+]] = vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK: arith.maximumf %{{.+}}, %[[EVENS]] : vector<8xf32>
// CHECK: vector.maskedload %[[X]][%{{.+}}, %{{.+}}], %{{.+}} : memref<4x41xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT: vector.gather
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @stride2(%x: memref<4x41xf32>, %y: memref<4x20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%y : memref<4x20xf32>) {
  ^bb0(%out: f32):
    %r = linalg.index 0 : index
    %o = linalg.index 1 : index
    %sum = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
      %s = arith.muli %o, %c2 : index
      %i = arith.addi %s, %k : index
      %v = memref.load %x[%r, %i] : memref<4x41xf32>
      %m = arith.maximumf %acc, %v : f32
      scf.yield %m : f32
    }
    linalg.yield %sum : f32
  }
  return
}

// -----

// Max pooling channels last: lanes run along the channels, every index the
// window computes is the same in each lane, so reads are vector loads and
// the bounds check a scalar select; nothing is versioned.
// CHECK-LABEL: func.func @pool_channels_last(
// CHECK-NOT: scf.if
// CHECK: %[[INSIDE:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: %[[V:.+]] = vector.load
// CHECK: %[[M:.+]] = arith.maximumf %[[ACC:.+]], %[[V]] : vector<8xf32>
// CHECK: arith.select %[[INSIDE]], %[[M]], %[[ACC]] : vector<8xf32>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @pool_channels_last(%x: memref<1x6x16xf32>, %y: memref<1x6x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %lowest = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%y : memref<1x6x16xf32>) {
  ^bb0(%out: f32):
    %n = linalg.index 0 : index
    %h = linalg.index 1 : index
    %c = linalg.index 2 : index
    %max = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %lowest) -> (f32) {
      %p0 = arith.addi %h, %k : index
      %p = arith.subi %p0, %c1 : index
      %low = arith.cmpi sge, %p, %c0 : index
      %high = arith.cmpi slt, %p, %c6 : index
      %inside = arith.andi %low, %high : i1
      %pc = arith.select %inside, %p, %c0 : index
      %v = memref.load %x[%n, %pc, %c] : memref<1x6x16xf32>
      %m = arith.maximumf %acc, %v : f32
      %kept = arith.select %inside, %m, %acc : f32
      scf.yield %kept : f32
    }
    linalg.yield %max : f32
  }
  return
}

// -----

// Left alone: a kernel whose reads do not run along its lanes (lane j reads
// row j) would gather every element.
// CHECK-LABEL: func.func @across(
// CHECK: linalg.generic
// CHECK-NOT: vector.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @across(%x: memref<16x4xf32>, %y: memref<3x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%y : memref<3x16xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 1 : index
    %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%j, %k] : memref<16x4xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    linalg.yield %sum : f32
  }
  return
}

// -----

// A window row of 4 taps or more sums from zero, and its sum is then added
// to the rows before it: each row is a chain of additions of its own.
// CHECK-LABEL: func.func @rows_apart(
// CHECK: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK: scf.for %{{.+}} = {{.+}} iter_args(%[[OUTER:.+]] = %{{.+}}) -> (vector<8xf32>)
// CHECK: %[[ROW:.+]] = scf.for %{{.+}} = {{.+}} iter_args(%[[ACC:.+]] = %[[ZEROS]]) -> (vector<8xf32>)
// CHECK: arith.addf %[[ACC]], %{{.+}} : vector<8xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[OUTER]], %[[ROW]] : vector<8xf32>
// CHECK: scf.yield %[[SUM]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @rows_apart(%x: memref<3x20xf32>, %y: memref<2x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<2x16xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %sum = scf.for %kh = %c0 to %c2 step %c1 iter_args(%outer = %zero) -> (f32) {
      %row = scf.for %kw = %c0 to %c5 step %c1 iter_args(%acc = %outer) -> (f32) {
        %h = arith.addi %i, %kh : index
        %w = arith.addi %j, %kw : index
        %v = memref.load %x[%h, %w] : memref<3x20xf32>
        %a = arith.addf %acc, %v : f32
        scf.yield %a : f32
      }
      scf.yield %row : f32
    }
    linalg.yield %sum : f32
  }
  return
}

// -----

// A depthwise window over a batch a run gives: the loops run to the run's
// batch around the same vectors as at static sizes.
// CHECK-LABEL: func.func @run_batch(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x2x6x20xf32>, %[[W:[a-z0-9]+]]: memref<2x1x3x3xf32>, %[[Y:[a-z0-9]+]]: memref<?x2x6x20xf32>)
// CHECK: %[[BATCH:.+]] = memref.dim %[[Y]], %c0
// CHECK: scf.for %[[N:[a-z0-9]+]] = %c0 to %[[BATCH]] step %c1
// CHECK: vector.load %[[X]][%[[N]], %{{.+}}, %{{.+}}, %{{.+}}] : memref<?x2x6x20xf32>, vector<8xf32>
// CHECK: vector.maskedload %[[X]][%[[N]],
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @run_batch(%x: memref<?x2x6x20xf32>, %w: memref<2x1x3x3xf32>, %y: memref<?x2x6x20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c20 = arith.constant 20 : index
  %zero = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%y : memref<?x2x6x20xf32>) {
  ^bb0(%out: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %oh = linalg.index 2 : index
    %ow = linalg.index 3 : index
    %sum = scf.for %kh = %c0 to %c3 step %c1 iter_args(%outer = %zero) -> (f32) {
      %inner = scf.for %kw = %c0 to %c3 step %c1 iter_args(%acc = %outer) -> (f32) {
        %h0 = arith.addi %oh, %kh : index
        %h = arith.subi %h0, %c1 : index
        %hlow = arith.cmpi sge, %h, %c0 : index
        %hhigh = arith.cmpi slt, %h, %c6 : index
        %hin = arith.andi %hlow, %hhigh : i1
        %hc = arith.select %hin, %h, %c0 : index
        %w0 = arith.addi %ow, %kw : index
        %wp = arith.subi %w0, %c1 : index
        %wlow = arith.cmpi sge, %wp, %c0 : index
        %whigh = arith.cmpi slt, %wp, %c20 : index
        %win = arith.andi %wlow, %whigh : i1
        %wc = arith.select %win, %wp, %c0 : index
        %inside = arith.andi %hin, %win : i1
        %v = memref.load %x[%n, %c, %hc, %wc] : memref<?x2x6x20xf32>
        %cell = arith.select %inside, %v, %zero : f32
        %weight = memref.load %w[%c, %c0, %kh, %kw] : memref<2x1x3x3xf32>
        %p = arith.mulf %cell, %weight : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      scf.yield %inner : f32
    }
    linalg.yield %sum : f32
  }
  return
}

// -----

// A depthwise window over an image whose height and width a run gives: the
// innermost extent takes whole vectors then a masked rest of
// width - (its first lane) lanes; the reads along the lanes stay vector
// loads, the bounds checks against the run's sizes versioned as at a static
// size.
// CHECK-LABEL: func.func @run_image(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x2x?x?xf32>, %{{[a-z0-9]+}}: memref<2x1x3x3xf32>, %[[Y:[a-z0-9]+]]: memref<1x2x?x?xf32>
// CHECK: %[[WIDTH:.+]] = memref.dim %[[Y]], %c3
// CHECK: %[[WHOLE:.+]] = arith.muli %{{.+}}, %c8
// CHECK: scf.for %{{.+}} = %c0 to %[[WHOLE]] step %c8
// CHECK: vector.load %[[X]][%c0, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x?x?xf32>, vector<8xf32>
// CHECK: %[[REST:.+]] = arith.subi %[[WIDTH]], %[[WHOLE]]
// CHECK: %[[MASK:.+]] = vector.create_mask %[[REST]] : vector<8xi1>
// CHECK: vector.maskedstore %[[Y]][%c0, %{{.+}}, %{{.+}}, %[[WHOLE]]], %[[MASK]]
// CHECK-NOT: vector.gather
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @run_image(%x: memref<1x2x?x?xf32>, %w: memref<2x1x3x3xf32>, %y: memref<1x2x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %height = memref.dim %x, %c2 : memref<1x2x?x?xf32>
  %width = memref.dim %x, %c3 : memref<1x2x?x?xf32>
  %zero = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%y : memref<1x2x?x?xf32>) {
  ^bb0(%out: f32):
    %c = linalg.index 1 : index
    %oh = linalg.index 2 : index
    %ow = linalg.index 3 : index
    %sum = scf.for %kh = %c0 to %c3 step %c1 iter_args(%outer = %zero) -> (f32) {
      %inner = scf.for %kw = %c0 to %c3 step %c1 iter_args(%acc = %outer) -> (f32) {
        %h0 = arith.addi %oh, %kh : index
        %h = arith.subi %h0, %c1 : index
        %hlow = arith.cmpi sge, %h, %c0 : index
        %hhigh = arith.cmpi slt, %h, %height : index
        %hin = arith.andi %hlow, %hhigh : i1
        %hc = arith.select %hin, %h, %c0 : index
        %w0 = arith.addi %ow, %kw : index
        %wp = arith.subi %w0, %c1 : index
        %wlow = arith.cmpi sge, %wp, %c0 : index
        %whigh = arith.cmpi slt, %wp, %width : index
        %win = arith.andi %wlow, %whigh : i1
        %wc = arith.select %win, %wp, %c0 : index
        %inside = arith.andi %hin, %win : i1
        %v = memref.load %x[%c0, %c, %hc, %wc] : memref<1x2x?x?xf32>
        %cell = arith.select %inside, %v, %zero : f32
        %weight = memref.load %w[%c, %c0, %kh, %kw] : memref<2x1x3x3xf32>
        %p = arith.mulf %cell, %weight : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      scf.yield %inner : f32
    }
    linalg.yield %sum : f32
  }
  return
}

// -----

// At stride 2 over a run's image, the lanes at an edge gather (a stride-2
// read under a mask): from a buffer sized at run time its offsets are
// 64-bit, each dimension's index times its run-time stride.
// CHECK-LABEL: func.func @run_image_stride2(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x?xf32>
// CHECK: vector.shuffle
// CHECK: %[[COLUMNS:.+]] = arith.extsi %{{.+}} : vector<8xi32> to vector<8xi64>
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1]] : memref<2x?xf32> into memref<?xf32>
// CHECK: vector.gather %[[FLAT]][%c0] [%{{.+}}], %{{.+}}, %{{.+}} : memref<?xf32>, vector<8xi64>, vector<8xi1>, vector<8xf32> into vector<8xf32>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @run_image_stride2(%x: memref<2x?xf32>, %y: memref<2x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %width = memref.dim %x, %c1 : memref<2x?xf32>
  %zero = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%y : memref<2x?xf32>) {
  ^bb0(%out: f32):
    %r = linalg.index 0 : index
    %o = linalg.index 1 : index
    %sum = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
      %s = arith.muli %o, %c2 : index
      %i0 = arith.addi %s, %k : index
      %i = arith.subi %i0, %c1 : index
      %low = arith.cmpi sge, %i, %c0 : index
      %high = arith.cmpi slt, %i, %width : index
      %in = arith.andi %low, %high : i1
      %ic = arith.select %in, %i, %c0 : index
      %v = memref.load %x[%r, %ic] : memref<2x?xf32>
      %cell = arith.select %in, %v, %zero : f32
      %a = arith.addf %acc, %cell : f32
      scf.yield %a : f32
    }
    linalg.yield %sum : f32
  }
  return
}
