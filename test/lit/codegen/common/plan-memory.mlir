// RUN: kiln-opt %s --kiln-lower-to-linalg --kiln-bufferize --kiln-plan-memory | FileCheck %s

// @main takes its inputs, its outputs (written in place), one activation
// arena and the weights, and allocates nothing. Buffers whose lifetimes do
// not overlap share arena bytes: the product's buffer (at 1024) is dead once
// the second relu has read it, so the sum reuses it; the first relu's
// buffer (at 0) lives until the sum reads it.
// CHECK: module attributes {kiln.arena_bytes = 3072 : i64, kiln.weights = [{offset = 0 : i64, value = dense<2.000000e+00> : tensor<256xf32>}], kiln.weights_bytes = 1024 : i64}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x256xf32> {kiln.name = "x"},
// CHECK-SAME: %[[Y:[a-z0-9]+]]: memref<1x256xf32> {kiln.name = "y", kiln.output = 0 : i64},
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<3072xi8> {kiln.arena},
// CHECK-SAME: %[[WEIGHTS:[a-z0-9]+]]: memref<1024xi8> {kiln.weights})
// CHECK-NOT: memref.alloc
// CHECK: %[[W:.+]] = memref.view %[[WEIGHTS]][%{{.+}}][] : memref<1024xi8> to memref<256xf32>
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[RELU1:.+]] = memref.view %[[ARENA]][%[[C0]]][] : memref<3072xi8> to memref<1x256xf32>
// CHECK: linalg.generic {{.+}} ins(%[[X]] : {{.+}}) outs(%[[RELU1]] :
// CHECK: %[[C1024:.+]] = arith.constant 1024 : index
// CHECK: %[[PRODUCT:.+]] = memref.view %[[ARENA]][%[[C1024]]][]
// CHECK: linalg.generic {{.+}} ins(%[[RELU1]], %[[W]] : {{.+}}) outs(%[[PRODUCT]] :
// CHECK: %[[C2048:.+]] = arith.constant 2048 : index
// CHECK: %[[RELU2:.+]] = memref.view %[[ARENA]][%[[C2048]]][]
// CHECK: linalg.generic {{.+}} ins(%[[PRODUCT]] : {{.+}}) outs(%[[RELU2]] :
// CHECK: %[[AGAIN:.+]] = arith.constant 1024 : index
// CHECK: %[[SUM:.+]] = memref.view %[[ARENA]][%[[AGAIN]]][]
// CHECK: linalg.generic {{.+}} ins(%[[RELU2]], %[[RELU1]] : {{.+}}) outs(%[[SUM]] :
// The last kernel writes the output in place.
// CHECK: linalg.generic {{.+}} ins(%[[SUM]] : {{.+}}) outs(%[[Y]] :
// CHECK-NOT: memref.copy
// CHECK: return
func.func @main(%x: tensor<1x256xf32> {kiln.name = "x"}) -> (tensor<1x256xf32> {kiln.name = "y"}) {
  %w = kiln.constant dense<2.0> : tensor<256xf32>
  %0 = kiln.relu %x : tensor<1x256xf32>
  %1 = kiln.mul %0, %w : (tensor<1x256xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  %2 = kiln.relu %1 : tensor<1x256xf32>
  %3 = kiln.add %2, %0 : (tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x256xf32>
  %4 = kiln.relu %3 : tensor<1x256xf32>
  return %4 : tensor<1x256xf32>
}
