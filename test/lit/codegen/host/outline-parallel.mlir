// RUN: kiln-opt %s --split-input-file --kiln-outline-parallel | FileCheck %s

// The loop body becomes a task function taking the buffers it uses and the
// task's index; the constants it uses are cloned into it. The loop becomes a
// call to a dispatch declaration, given the runtime's context (@main's new
// last argument), that names the task function and the task count.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8x4xf32>, %[[Y:[a-z0-9]+]]: memref<8x4xf32>, %[[RUNTIME:[a-z0-9]+]]: !llvm.ptr)
// CHECK: call @main_tasks.dispatch(%[[RUNTIME]], %[[X]], %[[Y]]) : (!llvm.ptr, memref<8x4xf32>, memref<8x4xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @main_tasks(%[[A:[a-z0-9]+]]: memref<8x4xf32>, %[[B:[a-z0-9]+]]: memref<8x4xf32>, %[[I:[a-z0-9]+]]: index)
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.0
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[V:.+]] = memref.load %[[A]][%[[I]], %[[C0]]]
// CHECK: %[[W:.+]] = arith.mulf %[[V]], %[[TWO]]
// CHECK: memref.store %[[W]], %[[B]][%[[I]], %[[C0]]]
// CHECK-NEXT: return
// CHECK: func.func private @main_tasks.dispatch(!llvm.ptr, memref<8x4xf32>, memref<8x4xf32>) attributes {kiln.task = @main_tasks, kiln.task_count = 8 : i64}
func.func @main(%x: memref<8x4xf32>, %y: memref<8x4xf32>) {
  %two = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  scf.forall (%i) in (8) {
    %v = memref.load %x[%i, %c0] : memref<8x4xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i, %c0] : memref<8x4xf32>
  }
  return
}

// -----

// Only the outermost loop is outlined; each loop gets a task function of
// its own. Task i of a loop from 1 to 8 by 3 runs index 1 + i * 3: there
// are 3 tasks (1, 4, 7).
// CHECK-LABEL: func.func @main(
// CHECK: call @main_tasks.dispatch(
// CHECK: call @main_tasks_0.dispatch(
// CHECK: func.func private @main_tasks(
// CHECK: scf.forall
// CHECK: func.func private @main_tasks.dispatch({{.+}}kiln.task_count = 2 : i64
// CHECK: func.func private @main_tasks_0(%{{.+}}: memref<8x4xf32>, %[[T:[a-z0-9]+]]: index)
// CHECK: %[[STEP:.+]] = arith.constant 3 : index
// CHECK: %[[SCALED:.+]] = arith.muli %[[T]], %[[STEP]]
// CHECK: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: %[[I:.+]] = arith.addi %[[SCALED]], %[[ONE]]
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[I]], %[[I]]]
// CHECK: func.func private @main_tasks_0.dispatch({{.+}}kiln.task_count = 3 : i64
func.func @main(%x: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (2) {
    scf.forall (%j) in (4) {
      memref.store %zero, %x[%i, %j] : memref<8x4xf32>
    }
  }
  scf.forall (%i) = (1) to (8) step (3) {
    memref.store %zero, %x[%i, %i] : memref<8x4xf32>
  }
  return
}

// -----

// Views the body uses are cloned into the task, which takes the buffer
// underneath rather than a strided view.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8x4xf32>, %{{.+}}: !llvm.ptr)
// CHECK: call @main_tasks.dispatch(%{{.+}}, %[[X]]) : (!llvm.ptr, memref<8x4xf32>) -> ()
// CHECK: func.func private @main_tasks(%[[BUFFER:[a-z0-9]+]]: memref<8x4xf32>, %[[I:[a-z0-9]+]]: index)
// CHECK: %[[VIEW:.+]] = memref.subview %[[BUFFER]][0, 1] [8, 2] [1, 1]
// CHECK: memref.store %{{.+}}, %[[VIEW]][%[[I]], %{{.+}}]
func.func @main(%x: memref<8x4xf32>) {
  %view = memref.subview %x[0, 1] [8, 2] [1, 1] : memref<8x4xf32> to memref<8x2xf32, strided<[4, 1], offset: 1>>
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (8) {
    %c0 = arith.constant 0 : index
    memref.store %zero, %view[%i, %c0] : memref<8x2xf32, strided<[4, 1], offset: 1>>
  }
  return
}

// -----

// A body that uses a scalar computed outside, or a buffer of dynamic shape,
// is left as a loop; @main still takes the context.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: !llvm.ptr)
// CHECK-COUNT-2: scf.forall
// CHECK-NOT: func.func private
func.func @main(%x: memref<8x4xf32>, %s: f32, %d: memref<?xf32>) {
  %twice = arith.addf %s, %s : f32
  scf.forall (%i) in (8) {
    %c0 = arith.constant 0 : index
    memref.store %twice, %x[%i, %c0] : memref<8x4xf32>
  }
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (8) {
    memref.store %zero, %d[%i] : memref<?xf32>
  }
  return
}

// -----

// Without @main there is nothing to do.
// CHECK-LABEL: func.func @other(
// CHECK-SAME: %{{.+}}: memref<4xf32>)
// CHECK: scf.forall
func.func @other(%x: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (4) {
    memref.store %zero, %x[%i] : memref<4xf32>
  }
  return
}

// -----

// A loop whose bound a run gives: the dispatch takes the task count,
// computed from the bound, as its last argument, and the task takes the
// sizes it reads besides its buffers. The view of a run's size goes into
// the task, but not its byte offset: where the plan put the buffer is an
// argument, so that the same kernel elsewhere in the arena is the same
// function.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<64xi8>, %[[N:[a-z0-9]+]]: index, %[[RUNTIME:[a-z0-9]+]]: !llvm.ptr)
// CHECK: %[[AT:.+]] = arith.constant 0 : index
// CHECK: %[[SPAN:.+]] = arith.subi %[[N]], %{{.+}} : index
// CHECK: %[[NONNEGATIVE:.+]] = arith.maxsi %[[SPAN]], %{{.+}} : index
// CHECK: %[[COUNT:.+]] = arith.ceildivui %[[NONNEGATIVE]], %{{.+}} : index
// CHECK: call @main_tasks.dispatch(%[[RUNTIME]], %[[X]], %[[AT]], %[[N]], %[[COUNT]]) : (!llvm.ptr, memref<64xi8>, index, index, index) -> ()
// CHECK: func.func private @main_tasks(%[[BYTES:.+]]: memref<64xi8>, %[[OFFSET:.+]]: index, %[[SIZE:.+]]: index, %{{.+}}: index)
// CHECK: memref.view %[[BYTES]][%[[OFFSET]]][%[[SIZE]]]
// CHECK: func.func private @main_tasks.dispatch(!llvm.ptr, memref<64xi8>, index, index, index) attributes {kiln.task = @main_tasks}
func.func @main(%bytes: memref<64xi8>, %n: index) {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %x = memref.view %bytes[%c0][%n] : memref<64xi8> to memref<?xf32>
  scf.forall (%i) in (%n) {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %x[%i] : memref<?xf32>
  }
  return
}
