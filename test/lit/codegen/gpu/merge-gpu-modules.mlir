// RUN: kiln-opt %s --kiln-merge-gpu-modules --split-input-file --verify-diagnostics | FileCheck %s

// Two outlined kernels end up in one module, named after their old modules,
// and the launches follow them.
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func @kernels::@first blocks
// CHECK: gpu.launch_func @kernels::@second blocks
// CHECK: gpu.module @kernels {
// CHECK:   gpu.func @first() kernel
// CHECK:   gpu.func @second() kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @second::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @first {
    gpu.func @main_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @main_kernel() kernel {
      gpu.return
    }
  }
}

// -----

// Merging must come before a target is attached.
// expected-error @+1 {{kernels must be merged before a target is attached}}
module attributes {gpu.container_module} {
  gpu.module @first [#nvvm.target<chip = "sm_90">] {
    gpu.func @main_kernel() kernel {
      gpu.return
    }
  }
}
