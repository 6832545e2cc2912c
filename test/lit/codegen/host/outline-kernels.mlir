// RUN: kiln-opt %s --split-input-file --kiln-outline-kernels | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-outline-kernels --kiln-merge-kernels | FileCheck %s --check-prefix=MERGED

// Each kernel at the top of @main (a loop nest, a linalg op) becomes a
// function of its own, never inlined, taking the buffers it uses: the
// constants it uses are cloned into it, and the arena views stay in @main
// as arguments, so that the function does not depend on where in the
// arena its buffers lie. @main calls them in order; the hook call stays.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8xf32>, %[[ARENA:[a-z0-9]+]]: memref<64xi8>, %[[Y:[a-z0-9]+]]: memref<8xf32>)
// CHECK: %[[T:.+]] = memref.view %[[ARENA]]
// CHECK: call @main_kernel(%[[X]], %[[T]]) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT: call @hook()
// CHECK-NEXT: call @main_kernel_0(%[[T]], %[[Y]]) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @main_kernel(%[[A:[a-z0-9]+]]: memref<8xf32>, %[[B:[a-z0-9]+]]: memref<8xf32>) attributes {passthrough = ["noinline"]}
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: %[[V:.+]] = memref.load %[[A]][%[[I]]]
// CHECK: memref.store %[[V]], %[[B]][%[[I]]]
// CHECK: func.func private @main_kernel_0(%[[S:[a-z0-9]+]]: memref<8xf32>, %[[OUT:[a-z0-9]+]]: memref<8xf32>) attributes {passthrough = ["noinline"]}
// CHECK: linalg.copy ins(%[[S]] : memref<8xf32>) outs(%[[OUT]] : memref<8xf32>)
func.func private @hook()
func.func @main(%x: memref<8xf32>, %arena: memref<64xi8>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %t = memref.view %arena[%c0][] : memref<64xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }
  call @hook() : () -> ()
  linalg.copy ins(%t : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// A kernel that uses a buffer a function cannot take (a dynamic shape)
// stays in @main.
// CHECK-LABEL: func.func @main(
// CHECK: scf.for
// CHECK-NOT: func.func private @main_kernel
func.func @main(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %x[%i] : memref<?xf32>
  }
  return
}

// -----

// A view a function cannot take (a strided slice) is cloned into the
// kernel, which takes the buffer it slices.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x8xf32>
// CHECK: call @main_kernel(%[[X]]) : (memref<4x8xf32>) -> ()
// CHECK: func.func private @main_kernel(%[[B:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK: memref.subview %[[B]][0, 2] [4, 4] [1, 1]
func.func @main(%x: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s = memref.subview %x[0, 2] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 2>>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %zero, %s[%i, %i] : memref<4x4xf32, strided<[8, 1], offset: 2>>
  }
  return
}

// -----

// Kernels over buffers of a run's size take the arena and where their
// buffers lie in it (a constant or a run's offset alike) as arguments: the
// same layer at two places in the arena is one function once merged.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<256xi8>, %[[N:[a-z0-9]+]]: index, %[[AT:[a-z0-9]+]]: index)
// CHECK: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK: call @main_kernel(%[[ARENA]], %[[ZERO]], %[[N]]) : (memref<256xi8>, index, index) -> ()
// CHECK: call @main_kernel_0(%[[ARENA]], %[[AT]], %[[N]]) : (memref<256xi8>, index, index) -> ()
// MERGED-LABEL: func.func @main(
// MERGED: call @main_kernel(
// MERGED: call @main_kernel(
// MERGED-NOT: func.func private @main_kernel_0
func.func @main(%arena: memref<256xi8>, %n: index, %at: index) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %a = memref.view %arena[%c0][%n] : memref<256xi8> to memref<?xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<?xf32>)
  %b = memref.view %arena[%at][%n] : memref<256xi8> to memref<?xf32>
  linalg.fill ins(%one : f32) outs(%b : memref<?xf32>)
  return
}
