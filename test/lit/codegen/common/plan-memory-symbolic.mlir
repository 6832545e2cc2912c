// RUN: kiln-opt %s --kiln-lower-to-linalg --kiln-bufferize --kiln-plan-memory | FileCheck %s

// Symbolic sizes: each buffer takes its bytes at the symbols' largest
// values (batch 8: 8 x 256 floats, 8192 bytes), so the arena serves every
// run; the views are as large as the run's batch. Buffers share bytes as
// static ones do. The inputs and outputs keep their dimensions.
// CHECK: module attributes {kiln.arena_bytes = 24576 : i64
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xf32> {kiln.dims = #kiln.dims<()[s0] -> (s0, 256)>, kiln.name = "x"},
// CHECK-SAME: %[[N:[a-z0-9]+]]: index {kiln.symbol = "batch"},
// CHECK-SAME: %[[Y:[a-z0-9]+]]: memref<?x256xf32> {kiln.dims = #kiln.dims<()[s0] -> (s0, 256)>, kiln.name = "y", kiln.output = 0 : i64},
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<24576xi8> {kiln.arena},
// CHECK-NOT: memref.alloc
// CHECK: %[[RELU1:.+]] = memref.view %[[ARENA]][%{{.+}}][%[[N]]] : memref<24576xi8> to memref<?x256xf32>
// CHECK: linalg.generic {{.+}} ins(%[[X]] : {{.+}}) outs(%[[RELU1]] :
// CHECK: %[[C8192:.+]] = arith.constant 8192 : index
// CHECK: %[[PRODUCT:.+]] = memref.view %[[ARENA]][%[[C8192]]][%[[N]]]
// CHECK: %[[C16384:.+]] = arith.constant 16384 : index
// CHECK: %[[RELU2:.+]] = memref.view %[[ARENA]][%[[C16384]]][%[[N]]]
// CHECK: %[[AGAIN:.+]] = arith.constant 8192 : index
// CHECK: %[[SUM:.+]] = memref.view %[[ARENA]][%[[AGAIN]]][%[[N]]]
// CHECK: linalg.generic {{.+}} ins(%[[SUM]] : {{.+}}) outs(%[[Y]] :
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
