// RUN: kiln-opt %s --split-input-file --kiln-merge-kernels | FileCheck %s

// Two kernels that differ only in their names (and locations) become one,
// which both calls use; a kernel that adds another constant stays apart.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<8xf32>, %[[B:[a-z0-9]+]]: memref<8xf32>)
// CHECK: call @main_kernel(%[[A]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @main_kernel(%[[B]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @main_kernel_1(%[[B]]) : (memref<8xf32>) -> ()
// CHECK: func.func private @main_kernel(
// CHECK-NOT: func.func private @main_kernel_0(
// CHECK: func.func private @main_kernel_1(
// CHECK: arith.constant 2.0
func.func @main(%a: memref<8xf32>, %b: memref<8xf32>) {
  call @main_kernel(%a) : (memref<8xf32>) -> ()
  call @main_kernel_0(%b) : (memref<8xf32>) -> ()
  call @main_kernel_1(%b) : (memref<8xf32>) -> ()
  return
}
func.func private @main_kernel(%x: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%x : memref<8xf32>)
  return
}
func.func private @main_kernel_0(%y: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%y : memref<8xf32>) loc("elsewhere")
  return
}
func.func private @main_kernel_1(%y: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%two : f32) outs(%y : memref<8xf32>)
  return
}

// -----

// Identical tasks merge, then so do their dispatches, which named them
// apart; a dispatch with another task count stays its own.
// CHECK-LABEL: func.func @main(
// CHECK: call @main_tasks.dispatch(
// CHECK-NEXT: call @main_tasks.dispatch(
// CHECK-NEXT: call @main_tasks_1.dispatch(
// CHECK: func.func private @main_tasks(
// CHECK-NOT: func.func private @main_tasks_0(
// CHECK: func.func private @main_tasks.dispatch({{.*}}) attributes {kiln.task = @main_tasks, kiln.task_count = 4 : i64}
// CHECK-NOT: @main_tasks_0
// CHECK: func.func private @main_tasks_1.dispatch({{.*}}) attributes {kiln.task = @main_tasks, kiln.task_count = 2 : i64}
func.func @main(%a: memref<8xf32>, %b: memref<8xf32>, %context: !llvm.ptr) {
  call @main_tasks.dispatch(%context, %a) : (!llvm.ptr, memref<8xf32>) -> ()
  call @main_tasks_0.dispatch(%context, %b) : (!llvm.ptr, memref<8xf32>) -> ()
  call @main_tasks_1.dispatch(%context, %b) : (!llvm.ptr, memref<8xf32>) -> ()
  return
}
func.func private @main_tasks(%x: memref<8xf32>, %i: index) {
  %one = arith.constant 1.0 : f32
  memref.store %one, %x[%i] : memref<8xf32>
  return
}
func.func private @main_tasks.dispatch(!llvm.ptr, memref<8xf32>) attributes {kiln.task = @main_tasks, kiln.task_count = 4 : i64}
func.func private @main_tasks_0(%y: memref<8xf32>, %j: index) {
  %one = arith.constant 1.0 : f32
  memref.store %one, %y[%j] : memref<8xf32>
  return
}
func.func private @main_tasks_0.dispatch(!llvm.ptr, memref<8xf32>) attributes {kiln.task = @main_tasks_0, kiln.task_count = 4 : i64}
func.func private @main_tasks_1.dispatch(!llvm.ptr, memref<8xf32>) attributes {kiln.task = @main_tasks_0, kiln.task_count = 2 : i64}

// -----

// A public function is never merged: its name is what callers see.
// CHECK-LABEL: func.func @main(
// CHECK: func.func @exported(
// CHECK: func.func private @kernel(
func.func @main(%a: memref<8xf32>) {
  call @kernel(%a) : (memref<8xf32>) -> ()
  return
}
func.func @exported(%x: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%x : memref<8xf32>)
  return
}
func.func private @kernel(%x: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%x : memref<8xf32>)
  return
}

// -----

// Declarations that dispatch no task (runtime hooks) keep their names,
// however alike.
// CHECK-LABEL: func.func @main(
// CHECK: call @hook_a()
// CHECK-NEXT: call @hook_b()
// CHECK: func.func private @hook_a() attributes {kiln.runtime_hook}
// CHECK: func.func private @hook_b() attributes {kiln.runtime_hook}
func.func @main() {
  call @hook_a() : () -> ()
  call @hook_b() : () -> ()
  return
}
func.func private @hook_a() attributes {kiln.runtime_hook}
func.func private @hook_b() attributes {kiln.runtime_hook}
