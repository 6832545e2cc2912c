// RUN: kiln-opt %s --kiln-plan-memory --kiln-list-kernels --kiln-mark-kernel-ends --kiln-outline-parallel --kiln-outline-kernels --kiln-skip-kept-kernels | FileCheck %s

// The two kernels of the sequence's length alone (outlined, each with its
// end hook) run only when the arena's header does not hold this run's
// sequence, or no run has written it; a run that ran them writes it at the
// end. The views they take stay outside.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<192xi8> {kiln.arena}
// CHECK-SAME: %[[SEQUENCE:[a-z0-9]+]]: index {kiln.kept_sizes, kiln.symbol = "sequence"}
// CHECK: %[[HEADER:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<192xi8> to memref<2xi64>
// CHECK: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK: %[[LENGTH:.+]] = arith.index_cast %[[SEQUENCE]] : index to i64
// CHECK: %[[FLAG:.+]] = memref.load %[[HEADER]][%{{.+}}] : memref<2xi64>
// CHECK: %[[UNSET:.+]] = arith.cmpi ne, %[[FLAG]], %[[ONE]] : i64
// CHECK: %[[HELD:.+]] = memref.load %[[HEADER]][%{{.+}}] : memref<2xi64>
// CHECK: %[[CHANGED:.+]] = arith.cmpi ne, %[[HELD]], %[[LENGTH]] : i64
// CHECK: %[[STALE:.+]] = arith.ori %{{.+}}, %[[CHANGED]] : i1
// CHECK: memref.view
// CHECK: scf.if %[[STALE]] {
// CHECK-NEXT: func.call @main_kernel(
// CHECK-NEXT: func.call @kiln_kernel_end(%{{.+}}, %{{.+}}) :
// CHECK-NEXT: }
// CHECK: memref.view %[[ARENA]]
// CHECK: scf.if %[[STALE]] {
// CHECK-NEXT: func.call @main_kernel_0(
// CHECK-NEXT: func.call @kiln_kernel_end(
// CHECK-NEXT: }
// CHECK-NEXT: call @main_kernel_1(
// CHECK-NOT: scf.if %[[STALE]] {
// CHECK: call @main_kernel_4(
// CHECK: scf.if %[[STALE]] {
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: memref.store %[[ONE]], %[[HEADER]][%{{.+}}] : memref<2xi64>
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: memref.store %[[LENGTH]], %[[HEADER]][%{{.+}}] : memref<2xi64>
// CHECK-NEXT: }
// CHECK-NEXT: return
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
