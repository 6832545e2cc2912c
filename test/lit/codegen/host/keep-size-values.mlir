// RUN: kiln-opt %s --kiln-keep-size-values | FileCheck %s
// RUN: kiln-opt %s --kiln-keep-size-values=max-bytes=32 | FileCheck %s --check-prefix=SMALL

// The steps (a weight times each position) and their exponentials come
// from the sequence's length alone: their kernels are marked, and the
// exponentials, which the sum with x reads, are kept; the steps, read only
// by a marked kernel, are not. The fill of the sum's accumulator writes a
// buffer that a kernel over x writes too: neither is marked, nor are the
// outputs' kernels. The kept values are computed from the sequence's
// length, not the batch's: only a change of the sequence computes them
// again.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.+}}: index {kiln.kept_sizes, kiln.symbol = "sequence"}, %{{.+}}: index {kiln.symbol = "batch"})
// CHECK: %[[STEPS:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: linalg.generic {{.+}} outs(%[[STEPS]] : memref<?xf32>) attrs =  {kiln.sizes_only}
// CHECK: %[[POSITIONS:.+]] = memref.alloc(%{{.+}}) {kiln.kept} : memref<?xf32>
// CHECK: linalg.generic {{.+}} ins(%[[STEPS]] : memref<?xf32>) outs(%[[POSITIONS]] : memref<?xf32>) attrs =  {kiln.sizes_only}
// CHECK-NOT: kiln.sizes_only
// CHECK-NOT: kiln.kept
// CHECK: return

// The exponentials take 64 bytes at the longest sequence (16): past
// max-bytes, nothing is kept and nothing marked.
// SMALL-NOT: kiln.sizes_only
// SMALL-NOT: kiln.kept
#seq = #kiln.dims<()[s0] -> (s0)>
#id = affine_map<(d0) -> (d0)>
#first = affine_map<(d0) -> (0)>
#all = affine_map<(d0) -> ()>
module attributes {kiln.symbols = [#kiln.symbol<"sequence", 1, 16, 1>, #kiln.symbol<"batch", 1, 4, 1>]} {
memref.global "private" constant @scale : memref<1xf32> = dense<0.5>
func.func @main(%x: memref<?xf32> {kiln.dims = #seq, kiln.name = "x"},
                %n: index {kiln.symbol = "sequence"}, %batch: index {kiln.symbol = "batch"})
    -> (memref<?xf32> {kiln.dims = #seq, kiln.name = "y"}, memref<f32> {kiln.name = "sum"}) {
  %scale = memref.get_global @scale : memref<1xf32>
  %steps = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#first, #id], iterator_types = ["parallel"]}
      ins(%scale : memref<1xf32>) outs(%steps : memref<?xf32>) {
  ^bb0(%s: f32, %out: f32):
    %i = linalg.index 0 : index
    %int = arith.index_cast %i : index to i64
    %f = arith.sitofp %int : i64 to f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  }
  %positions = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%steps : memref<?xf32>) outs(%positions : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %y = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %positions : memref<?xf32>, memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  %total = memref.alloc() : memref<f32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%total : memref<f32>)
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%x : memref<?xf32>) outs(%total : memref<f32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  }
  %sum = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%total : memref<f32>) outs(%sum : memref<f32>) {
  ^bb0(%a: f32, %out: f32):
    %twice = arith.addf %a, %a : f32
    linalg.yield %twice : f32
  }
  return %y, %sum : memref<?xf32>, memref<f32>
}
}
