// RUN: kiln-opt %s --kiln-plan-memory --kiln-list-kernels | FileCheck %s

// A kept buffer (the exponentials) lies at the bottom of the arena, above a
// 64-byte header (a flag and the sequence's value, 16 bytes, rounded up),
// at its largest size (16 floats) in every run: an offset of 64, not
// computed from the run's sizes, and no other buffer takes its bytes. The
// steps, which only the kept buffer's kernel reads, and later the sum's
// accumulator share the bytes above it. The kernel list says which
// kernels compute from the sizes alone.
// CHECK: module attributes {kiln.arena_bytes = 192 : i64, kiln.kernels = [{{{[^}]*}}offset = 128 : i64, precision = "fp32", sizes_only = true}, {{{[^}]*}}offset = 64 : i64, precision = "fp32", sizes_only = true}, {{{[^}]*}}buffer = "y"{{[^}]*}}precision = "fp32"}, {{{[^}]*}}kind = "fill"{{[^}]*}}offset = 128 : i64, precision = "fp32"}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<192xi8> {kiln.arena}
// CHECK: %[[AT128:.+]] = arith.constant 128 : index
// CHECK: %[[STEPS:.+]] = memref.view %[[ARENA]][%[[AT128]]][%{{.+}}] : memref<192xi8> to memref<?xf32>
// CHECK: outs(%[[STEPS]] : memref<?xf32>)
// CHECK: %[[AT64:.+]] = arith.constant 64 : index
// CHECK: %[[POSITIONS:.+]] = memref.view %[[ARENA]][%[[AT64]]][%{{.+}}] : memref<192xi8> to memref<?xf32>
// CHECK: ins(%[[STEPS]] : memref<?xf32>) outs(%[[POSITIONS]] : memref<?xf32>)
#seq = #kiln.dims<()[s0] -> (s0)>
#id = affine_map<(d0) -> (d0)>
#first = affine_map<(d0) -> (0)>
#all = affine_map<(d0) -> ()>
module attributes {kiln.symbols = [#kiln.symbol<"sequence", 1, 16, 1>]} {
memref.global "private" constant @scale : memref<1xf32> = dense<0.5>
func.func @main(%x: memref<?xf32> {kiln.dims = #seq, kiln.name = "x"},
                %n: index {kiln.symbol = "sequence", kiln.kept_sizes})
    -> (memref<?xf32> {kiln.dims = #seq, kiln.name = "y"}, memref<f32> {kiln.name = "sum"}) {
  %scale = memref.get_global @scale : memref<1xf32>
  %steps = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#first, #id], iterator_types = ["parallel"]}
      ins(%scale : memref<1xf32>) outs(%steps : memref<?xf32>) attrs = {kiln.sizes_only} {
  ^bb0(%s: f32, %out: f32):
    %i = linalg.index 0 : index
    %int = arith.index_cast %i : index to i64
    %f = arith.sitofp %int : i64 to f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  }
  %positions = memref.alloc(%n) {kiln.kept} : memref<?xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%steps : memref<?xf32>) outs(%positions : memref<?xf32>) attrs = {kiln.sizes_only} {
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
