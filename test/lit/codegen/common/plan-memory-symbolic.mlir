// RUN: kiln-opt %s --kiln-lower-to-linalg --kiln-bufferize --kiln-plan-memory | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-to-linalg --kiln-bufferize --kiln-plan-memory=offset-terms=3 | FileCheck %s --check-prefix=TERMS

// Symbolic sizes: the placement is planned at the symbols' largest values
// (batch 8: 8 x 256 floats, 8192 bytes), so the arena serves every run.
// In a run, each buffer goes just above the live buffers placed below it,
// in the same order: offsets are computed at the top of @main from the
// run's batch (one size, S, for buffers of one shape), and buffers share
// bytes as static ones do. Symbolic inputs and outputs become byte buffers
// as large as they can be, viewed with the run's sizes; the symbol's value
// comes after the arena and the weights.
// CHECK: module attributes {kiln.arena_bytes = 24576 : i64
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[XBYTES:[a-z0-9]+]]: memref<8192xi8> {kiln.dims = #kiln.dims<()[s0] -> (s0, 256)>, kiln.name = "x"},
// CHECK-SAME: %[[YBYTES:[a-z0-9]+]]: memref<8192xi8> {kiln.dims = #kiln.dims<()[s0] -> (s0, 256)>, kiln.name = "y", kiln.output = 0 : i64},
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<24576xi8> {kiln.arena},
// CHECK-SAME: %[[WEIGHTS:[a-z0-9]+]]: memref<1024xi8> {kiln.weights},
// CHECK-SAME: %[[N:[a-z0-9]+]]: index {kiln.symbol = "batch"})
// CHECK: %[[X:.+]] = memref.view %[[XBYTES]][%{{.+}}][%[[N]]] : memref<8192xi8> to memref<?x256xf32>
// CHECK: %[[Y:.+]] = memref.view %[[YBYTES]][%{{.+}}][%[[N]]] : memref<8192xi8> to memref<?x256xf32>
// CHECK: %[[ROW:.+]] = arith.constant 1024 : index
// CHECK: %[[BYTES:.+]] = arith.muli %[[ROW]], %[[N]]
// CHECK: %[[ROUNDED:.+]] = arith.addi %[[BYTES]]
// CHECK: %[[S:.+]] = arith.andi %[[ROUNDED]]
// CHECK: %[[ABOVE_PRODUCT:.+]] = arith.addi %[[S]], %[[S]]
// CHECK: %[[ABOVE_SUM:.+]] = arith.addi %[[S]], %[[S]]
// CHECK: %[[MAX:.+]] = arith.maxui %[[S]], %[[ABOVE_PRODUCT]]
// CHECK: %[[RELU2_AT:.+]] = arith.maxui %[[MAX]], %[[ABOVE_SUM]]
// CHECK-NOT: memref.alloc
// CHECK: %[[RELU1:.+]] = memref.view %[[ARENA]][%{{.+}}][%[[N]]] : memref<24576xi8> to memref<?x256xf32>
// CHECK: linalg.generic {{.+}} ins(%[[X]] : {{.+}}) outs(%[[RELU1]] :
// CHECK: %[[PRODUCT:.+]] = memref.view %[[ARENA]][%[[S]]][%[[N]]]
// CHECK: %[[RELU2:.+]] = memref.view %[[ARENA]][%[[RELU2_AT]]][%[[N]]]
// CHECK: %[[SUM:.+]] = memref.view %[[ARENA]][%[[S]]][%[[N]]]
// CHECK: linalg.generic {{.+}} ins(%[[SUM]] : {{.+}}) outs(%[[Y]] :
// With at most 3 terms an offset (GPU plans allow 256), the product's
// (4: the batch's bytes rounded up to 64) and the second Relu's (a maximum
// of three such) are those at the largest batch: 8192 and 16384 bytes, in
// every run. The first Relu's is 0.
// TERMS: memref.view %{{.+}}[%c0{{(_[0-9]+)?}}][%{{.+}}] : memref<24576xi8> to memref<?x256xf32>
// TERMS: memref.view %{{.+}}[%c8192{{(_[0-9]+)?}}][%{{.+}}] : memref<24576xi8> to memref<?x256xf32>
// TERMS: memref.view %{{.+}}[%c16384{{(_[0-9]+)?}}][%{{.+}}] : memref<24576xi8> to memref<?x256xf32>
module attributes {kiln.symbols = [#kiln.symbol<"batch", 1, 8, 1>]} {
func.func @main(%x: tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>> {kiln.name = "x"})
    -> (tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>> {kiln.name = "y"}) {
  %w = kiln.constant dense<2.0> : tensor<256xf32>
  %0 = kiln.relu %x : tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>
  %1 = kiln.mul %0, %w : (tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>, tensor<256xf32>) -> tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>
  %2 = kiln.relu %1 : tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>
  %3 = kiln.add %2, %0 : (tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>, tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>) -> tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>
  %4 = kiln.relu %3 : tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>
  return %4 : tensor<?x256xf32, #kiln.dims<()[s0] -> (s0, 256)>>
}
}
