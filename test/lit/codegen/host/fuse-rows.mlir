// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-rows))' | FileCheck %s

// Attention over 2 heads of 512 queries and keys (scores of 2 MiB): the
// scores' product, a mask added, Softmax's row statistics and
// normalization, and the product with V become one loop of tasks, one per
// head and block of 16 query rows. Each runs the same kernels on its
// block: Q's, the mask's and O's rows of the block, K and V of its head,
// the intermediates in buffers of 16 rows on its stack. The buffers of
// all rows are gone.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x2x512x16xf32>, %[[KT:[a-z0-9]+]]: memref<1x2x16x512xf32>, %[[V:[a-z0-9]+]]: memref<1x2x512x16xf32>, %[[MASK:[a-z0-9]+]]: memref<1x1x512x512xf32>, %[[O:[a-z0-9]+]]: memref<1x2x512x16xf32>)
// CHECK-NOT: memref.alloc()
// CHECK: scf.forall (%[[T:.+]]) in (64) {
// CHECK-DAG: %[[HEAD:.+]] = arith.divui %[[T]], %c32
// CHECK-DAG: %[[BLOCK:.+]] = arith.remui %[[T]], %c32
// CHECK-DAG: %[[ROW:.+]] = arith.muli %[[BLOCK]], %c16
// CHECK-COUNT-2: memref.alloca() {alignment = 64 : i64} : memref<1x1x16x1xf32>
// CHECK-NOT: memref.alloc()
// CHECK: linalg.fill {{.*}} outs(%[[S:.+]] : memref<1x1x16x512xf32>)
// CHECK: %[[QB:.+]] = memref.subview %[[Q]][%{{.+}}, %[[HEAD]], %[[ROW]], 0] [1, 1, 16, 16]
// CHECK: %[[KH:.+]] = memref.subview %[[KT]][%{{.+}}, %[[HEAD]], 0, 0] [1, 1, 16, 512]
// CHECK: linalg.generic {{.*}} ins(%[[QB]], %[[KH]] : {{.*}}) outs(%[[S]] :
// CHECK: %[[MB:.+]] = memref.subview %[[MASK]][%{{.+}}, 0, %[[ROW]], 0] [1, 1, 16, 512]
// CHECK: linalg.generic {{.*}} ins(%[[S]], %[[MB]] : {{.*}}) outs(%[[S2:.+]] : memref<1x1x16x512xf32>)
// CHECK: memref.load %[[S2]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x1x16x512xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S2]], {{.*}}) outs(%[[P:.+]] : memref<1x1x16x512xf32>)
// CHECK: %[[OB:.+]] = memref.subview %[[O]][%{{.+}}, %[[HEAD]], %[[ROW]], 0] [1, 1, 16, 16]
// CHECK: linalg.fill {{.*}} outs(%[[OB]] :
// CHECK: %[[VH:.+]] = memref.subview %[[V]][%{{.+}}, %[[HEAD]], 0, 0] [1, 1, 512, 16]
// CHECK: %[[OB2:.+]] = memref.subview %[[O]][%{{.+}}, %[[HEAD]], %[[ROW]], 0] [1, 1, 16, 16]
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[VH]] : {{.*}}) outs(%[[OB2]] :
// CHECK: } {kiln.flops = 33554432 : i64, kiln.kernel = "attention"}
// CHECK-NOT: linalg.generic
// CHECK: return
#q = affine_map<(b, h, m, k, n) -> (b, h, m, k)>
#k = affine_map<(b, h, m, k, n) -> (b, h, k, n)>
#s = affine_map<(b, h, m, k, n) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#mask = affine_map<(b, h, m, n) -> (b, 0, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m, 0)>
func.func @attention(%q: memref<1x2x512x16xf32>, %kt: memref<1x2x16x512xf32>,
                     %v: memref<1x2x512x16xf32>, %maskv: memref<1x1x512x512xf32>,
                     %o: memref<1x2x512x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %s = memref.alloc() : memref<1x2x512x512xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x512x512xf32>)
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : memref<1x2x512x16xf32>, memref<1x2x16x512xf32>) outs(%s : memref<1x2x512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  %s2 = memref.alloc() : memref<1x2x512x512xf32>
  linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %maskv : memref<1x2x512x512xf32>, memref<1x1x512x512xf32>) outs(%s2 : memref<1x2x512x512xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  }
  %max = memref.alloc() : memref<1x2x512x1xf32>
  %sum = memref.alloc() : memref<1x2x512x1xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%max, %sum : memref<1x2x512x1xf32>, memref<1x2x512x1xf32>) {
  ^bb0(%out: f32, %out2: f32):
    %h = linalg.index 1 : index
    %m = linalg.index 2 : index
    %mx = scf.for %j = %c0 to %c512 step %c1 iter_args(%acc = %lowest) -> (f32) {
      %x = memref.load %s2[%c0, %h, %m, %j] : memref<1x2x512x512xf32>
      %r = arith.maximumf %acc, %x : f32
      scf.yield %r : f32
    }
    %sm = scf.for %j = %c0 to %c512 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %s2[%c0, %h, %m, %j] : memref<1x2x512x512xf32>
      %d = arith.subf %x, %mx : f32
      %e = math.exp %d : f32
      %r = arith.addf %acc, %e : f32
      scf.yield %r : f32
    }
    linalg.yield %mx, %sm : f32, f32
  }
  %p = memref.alloc() : memref<1x2x512x512xf32>
  linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s2, %max, %sum : memref<1x2x512x512xf32>, memref<1x2x512x1xf32>, memref<1x2x512x1xf32>) outs(%p : memref<1x2x512x512xf32>) {
  ^bb0(%x: f32, %mx: f32, %sm: f32, %out: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %sm : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x512x16xf32>)
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : memref<1x2x512x512xf32>, memref<1x2x512x16xf32>) outs(%o : memref<1x2x512x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Scores of 256 KiB stay in the caches unfused.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: scf.forall
// CHECK: memref.alloc() : memref<1x1x256x256xf32>
#q2 = affine_map<(b, h, m, k, n) -> (b, h, m, k)>
#k2 = affine_map<(b, h, m, k, n) -> (b, h, k, n)>
#s2 = affine_map<(b, h, m, k, n) -> (b, h, m, n)>
func.func @small(%q: memref<1x1x256x16xf32>, %kt: memref<1x1x16x256xf32>,
                 %v: memref<1x1x256x16xf32>, %o: memref<1x1x256x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<1x1x256x256xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x1x256x256xf32>)
  linalg.generic {indexing_maps = [#q2, #k2, #s2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : memref<1x1x256x16xf32>, memref<1x1x16x256xf32>) outs(%s : memref<1x1x256x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x1x256x16xf32>)
  linalg.generic {indexing_maps = [#q2, #k2, #s2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%s, %v : memref<1x1x256x256xf32>, memref<1x1x256x16xf32>) outs(%o : memref<1x1x256x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Two products whose second multiplies by a 4 MiB weight (an MLP's, read
// whole by every block of rows) stay apart: each block would read it from
// memory again.
// CHECK-LABEL: func.func @weights(
// CHECK-NOT: scf.forall
#a3 = affine_map<(m, k, n) -> (m, k)>
#b3 = affine_map<(m, k, n) -> (k, n)>
#c3 = affine_map<(m, k, n) -> (m, n)>
func.func @weights(%x: memref<1024x64xf32>, %w1: memref<64x1024xf32>,
                   %w2: memref<1024x1024xf32>, %o: memref<1024x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<1024x1024xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w1 : memref<1024x64xf32>, memref<64x1024xf32>) outs(%h : memref<1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%h, %w2 : memref<1024x1024xf32>, memref<1024x1024xf32>) outs(%o : memref<1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A causal mask computed from the loop indices (a key after the query is
// hidden) stays unfused: in a block, the row index counts from the
// block's first row.
// CHECK-LABEL: func.func @causal(
// CHECK-NOT: scf.forall
#q4 = affine_map<(b, h, m, k, n) -> (b, h, m, k)>
#k4 = affine_map<(b, h, m, k, n) -> (b, h, k, n)>
#s4 = affine_map<(b, h, m, k, n) -> (b, h, m, n)>
#id4 = affine_map<(b, h, m, n) -> (b, h, m, n)>
func.func @causal(%q: memref<1x1x512x16xf32>, %kt: memref<1x1x16x512xf32>,
                  %v: memref<1x1x512x16xf32>, %o: memref<1x1x512x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %s = memref.alloc() : memref<1x1x512x512xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x1x512x512xf32>)
  linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : memref<1x1x512x16xf32>, memref<1x1x16x512xf32>) outs(%s : memref<1x1x512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  %masked = memref.alloc() : memref<1x1x512x512xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : memref<1x1x512x512xf32>) outs(%masked : memref<1x1x512x512xf32>) {
  ^bb0(%x: f32, %out: f32):
    %row = linalg.index 2 : index
    %col = linalg.index 3 : index
    %later = arith.cmpi ugt, %col, %row : index
    %r = arith.select %later, %lowest, %x : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x1x512x16xf32>)
  linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%masked, %v : memref<1x1x512x512xf32>, memref<1x1x512x16xf32>) outs(%o : memref<1x1x512x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A kernel of the chain that also writes a buffer from outside it (here
// the scaled scores, kept) keeps the chain apart: its blocks would be
// written task by task while other kernels may read the buffer whole.
// CHECK-LABEL: func.func @writes_outside(
// CHECK-NOT: scf.forall
#q5 = affine_map<(b, h, m, k, n) -> (b, h, m, k)>
#k5 = affine_map<(b, h, m, k, n) -> (b, h, k, n)>
#s5 = affine_map<(b, h, m, k, n) -> (b, h, m, n)>
#id5 = affine_map<(b, h, m, n) -> (b, h, m, n)>
func.func @writes_outside(%q: memref<1x1x512x16xf32>, %kt: memref<1x1x16x512xf32>,
                          %v: memref<1x1x512x16xf32>, %kept: memref<1x1x512x512xf32>,
                          %o: memref<1x1x512x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() : memref<1x1x512x512xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x1x512x512xf32>)
  linalg.generic {indexing_maps = [#q5, #k5, #s5], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : memref<1x1x512x16xf32>, memref<1x1x16x512xf32>) outs(%s : memref<1x1x512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  %scaled = memref.alloc() : memref<1x1x512x512xf32>
  linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : memref<1x1x512x512xf32>) outs(%scaled, %kept : memref<1x1x512x512xf32>, memref<1x1x512x512xf32>) {
  ^bb0(%x: f32, %out: f32, %out2: f32):
    %r = arith.mulf %x, %scale : f32
    linalg.yield %r, %r : f32, f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x1x512x16xf32>)
  linalg.generic {indexing_maps = [#q5, #k5, #s5], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%scaled, %v : memref<1x1x512x512xf32>, memref<1x1x512x16xf32>) outs(%o : memref<1x1x512x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A normalization over rows of 64 (LayerNorm's mean and deviation, then
// each element normalized) runs as one kernel, a block of 12 rows of 96 at
// a time: the statistics' loads read the block's slice of the input, at
// the row index that now counts from the block's start, into statistics
// of 12 rows on the task's stack.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x96x64xf32>, %[[Y:[a-z0-9]+]]: memref<1x96x64xf32>)
// CHECK: scf.forall (%[[T:.+]]) in (8) {
// CHECK: %[[ROW:.+]] = arith.muli %{{.+}}, %c12
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<1x12x1xf32>
// CHECK: %[[XB:.+]] = memref.subview %[[X]][%{{.+}}, %[[ROW]], 0] [1, 12, 64]
// CHECK: linalg.generic
// CHECK: memref.load %[[XB]][%{{.+}}, %{{.+}}, %{{.+}}]
// CHECK: %[[YB:.+]] = memref.subview %[[Y]][%{{.+}}, %[[ROW]], 0] [1, 12, 64]
// CHECK: linalg.generic {{.*}} outs(%[[YB]] :
// CHECK: } {kiln.flops = 0 : i64, kiln.kernel = "normalize"}
#id6 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row6 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @layer_norm(%x: memref<1x96x64xf32>, %y: memref<1x96x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %mean = memref.alloc() : memref<1x96x1xf32>
  %dev = memref.alloc() : memref<1x96x1xf32>
  linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%mean, %dev : memref<1x96x1xf32>, memref<1x96x1xf32>) {
  ^bb0(%o1: f32, %o2: f32):
    %r = linalg.index 1 : index
    %s = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%c0, %r, %j] : memref<1x96x64xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    %m = arith.divf %s, %n : f32
    %q = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%c0, %r, %j] : memref<1x96x64xf32>
      %d = arith.subf %v, %m : f32
      %a = math.fma %d, %d, %acc : f32
      scf.yield %a : f32
    }
    %var = arith.divf %q, %n : f32
    %sd = math.sqrt %var : f32
    linalg.yield %m, %sd : f32, f32
  }
  linalg.generic {indexing_maps = [#id6, #row6, #row6, #id6], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mean, %dev : memref<1x96x64xf32>, memref<1x96x1xf32>, memref<1x96x1xf32>) outs(%y : memref<1x96x64xf32>) {
  ^bb0(%v: f32, %m: f32, %sd: f32, %out: f32):
    %d = arith.subf %v, %m : f32
    %r = arith.divf %d, %sd : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same attention, unmasked, with a batch given at run time: the tasks
// are the batch's size times 2 heads times 32 blocks of rows, counted at
// run time, and a task's batch and head come from its index over the
// blocks. Every buffer of the chain is allocated with the batch's size.
// CHECK-LABEL: func.func @batch(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x2x512x16xf32>, %{{.+}}: memref<?x2x16x512xf32>, %{{.+}}: memref<?x2x512x16xf32>, %[[N:[a-z0-9]+]]: index)
// CHECK: %[[O:.+]] = memref.alloc(%[[N]]) : memref<?x2x512x16xf32>
// CHECK-NOT: memref.alloc(
// CHECK: %[[TASKS:.+]] = arith.muli %[[N]], %c64
// CHECK: scf.forall (%[[T:.+]]) in (%[[TASKS]]) {
// CHECK: %[[BLOCKS:.+]] = arith.divui %[[T]], %c32
// CHECK: %[[HEAD:.+]] = arith.remui %[[BLOCKS]], %c2
// CHECK: %[[B:.+]] = arith.divui %[[BLOCKS]], %c2
// CHECK: memref.subview %[[Q]][%[[B]], %[[HEAD]], %{{.+}}, 0] [1, 1, 16, 16]
// CHECK: } {kiln.flops = 0 : i64, kiln.kernel = "attention"}
// CHECK-NOT: linalg.generic
// CHECK: return %[[O]]
#q = affine_map<(b, h, m, k, n) -> (b, h, m, k)>
#k = affine_map<(b, h, m, k, n) -> (b, h, k, n)>
#s = affine_map<(b, h, m, k, n) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m, 0)>
func.func @batch(%q: memref<?x2x512x16xf32>, %kt: memref<?x2x16x512xf32>,
                 %v: memref<?x2x512x16xf32>, %n: index) -> memref<?x2x512x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %s = memref.alloc(%n) : memref<?x2x512x512xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x2x512x512xf32>)
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : memref<?x2x512x16xf32>, memref<?x2x16x512xf32>) outs(%s : memref<?x2x512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  %max = memref.alloc(%n) : memref<?x2x512x1xf32>
  %sum = memref.alloc(%n) : memref<?x2x512x1xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%max, %sum : memref<?x2x512x1xf32>, memref<?x2x512x1xf32>) {
  ^bb0(%out: f32, %out2: f32):
    %b = linalg.index 0 : index
    %h = linalg.index 1 : index
    %m = linalg.index 2 : index
    %mx = scf.for %j = %c0 to %c512 step %c1 iter_args(%acc = %lowest) -> (f32) {
      %x = memref.load %s[%b, %h, %m, %j] : memref<?x2x512x512xf32>
      %r = arith.maximumf %acc, %x : f32
      scf.yield %r : f32
    }
    %sm = scf.for %j = %c0 to %c512 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %s[%b, %h, %m, %j] : memref<?x2x512x512xf32>
      %d = arith.subf %x, %mx : f32
      %e = math.exp %d : f32
      %r = arith.addf %acc, %e : f32
      scf.yield %r : f32
    }
    linalg.yield %mx, %sm : f32, f32
  }
  %p = memref.alloc(%n) : memref<?x2x512x512xf32>
  linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %max, %sum : memref<?x2x512x512xf32>, memref<?x2x512x1xf32>, memref<?x2x512x1xf32>) outs(%p : memref<?x2x512x512xf32>) {
  ^bb0(%x: f32, %mx: f32, %sm: f32, %out: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %sm : f32
    linalg.yield %r : f32
  }
  %o = memref.alloc(%n) : memref<?x2x512x16xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<?x2x512x16xf32>)
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : memref<?x2x512x512xf32>, memref<?x2x512x16xf32>) outs(%o : memref<?x2x512x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return %o : memref<?x2x512x16xf32>
}
