// RUN: kiln-opt %s --split-input-file --kiln-mark-kernel-ends | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-mark-kernel-ends --kiln-outline-parallel | FileCheck %s --check-prefix=CONTEXT

// After each kernel kiln-list-kernels lists (linalg ops with an output, and
// loop nests marked kiln.kernel), a call to the hook with the kernel's index
// in that list; views are no kernels.
// CHECK-LABEL: func.func @main(
// CHECK: linalg.fill
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @kiln_kernel_end(%[[ZERO]]) : (i64) -> ()
// CHECK-NEXT: memref.collapse_shape
// CHECK: scf.for
// CHECK: } {kiln.kernel = "matmul"}
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-NEXT: call @kiln_kernel_end(%[[ONE]]) : (i64) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @kiln_kernel_end(i64) attributes {kiln.runtime_hook}

// kiln-outline-parallel gives the hook the runtime's context first.
// CONTEXT-LABEL: func.func @main(
// CONTEXT-SAME: %[[RUNTIME:[a-z0-9]+]]: !llvm.ptr)
// CONTEXT: call @kiln_kernel_end(%[[RUNTIME]], %{{.+}}) : (!llvm.ptr, i64) -> ()
// CONTEXT: call @kiln_kernel_end(%[[RUNTIME]], %{{.+}}) : (!llvm.ptr, i64) -> ()
// CONTEXT: func.func private @kiln_kernel_end(!llvm.ptr, i64) attributes {kiln.runtime_hook}
func.func @main(%x: memref<2x4xf32>, %y: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<2x4xf32>)
  %flat = memref.collapse_shape %x [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %flat[%i] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
  } {kiln.kernel = "matmul"}
  return
}

// -----

// A module whose @main is only declared has no kernels, and no hook.
// CHECK: // -----
// CHECK-NOT: kiln_kernel_end
func.func private @main(memref<4xf32>)
