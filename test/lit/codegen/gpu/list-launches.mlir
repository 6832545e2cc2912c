// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-list-launches | FileCheck %s

// Each launch becomes its kernel's `launch` entry: the kernel, its grid and
// block, and each argument as the memory it lies in (an input, the arena at
// the view's byte offset, an output) or as a scalar's width and bits.
// CHECK: kiln.kernels = [
// CHECK-SAME: launch = {args = [{base = "input", byte_offset = 0 : i64, index = 0 : i64, offset = 0 : i64, sizes = array<i64: 2, 8>, strides = array<i64: 8, 1>}, {base = "arena", byte_offset = 64 : i64, index = 0 : i64, offset = 0 : i64, sizes = array<i64: 2, 8>, strides = array<i64: 8, 1>}], block = array<i64: 4, 1, 1>, grid = array<i64: 1, 1, 1>, kernel = "add", shared = 0 : i64}
// CHECK-SAME: launch = {args = [{base = "arena", byte_offset = 64 : i64, {{.*}}}, {bits = 1073741824 : i64, width = 4 : i64}, {base = "output", byte_offset = 0 : i64, index = 0 : i64, {{.*}}}], block = array<i64: 4, 1, 1>, grid = array<i64: 2, 1, 1>, kernel = "scale", shared = 0 : i64}
module attributes {gpu.container_module, kiln.arena_bytes = 128 : i64, kiln.kernels = [{after = array<i64>, buffer = "arena", bytes = 64 : i64, inputs = ["x"], kind = "elementwise", layout = "", node = "", offset = 64 : i64, precision = "fp32"}, {after = array<i64: 0>, buffer = "y", bytes = 64 : i64, inputs = [], kind = "elementwise", layout = "", node = "", offset = 0 : i64, precision = "fp32"}], kiln.weights = [], kiln.weights_bytes = 0 : i64} {
  func.func @main(%x: memref<2x8xf32> {kiln.name = "x"}, %y: memref<2x8xf32> {kiln.name = "y", kiln.output = 0 : i64}, %arena: memref<128xi8> {kiln.arena}, %weights: memref<0xi8> {kiln.weights}) {
    %c4 = arith.constant 4 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %two = arith.constant 2.0 : f32
    %sum = memref.view %arena[%c64][] : memref<128xi8> to memref<2x8xf32>
    gpu.launch_func @kernels::@add blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<2x8xf32>, %sum : memref<2x8xf32>)
    gpu.launch_func @kernels::@scale blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%sum : memref<2x8xf32>, %two : f32, %y : memref<2x8xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @add(%in: memref<2x8xf32>, %out: memref<2x8xf32>) kernel {
      gpu.return
    }
    gpu.func @scale(%in: memref<2x8xf32>, %factor: f32, %out: memref<2x8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Work between launches would have to run on the host: a GPU plan refuses it.
module attributes {gpu.container_module, kiln.arena_bytes = 0 : i64, kiln.kernels = [{after = array<i64>, buffer = "y", bytes = 64 : i64, inputs = ["x"], kind = "copy", layout = "", node = "", offset = 0 : i64, precision = "fp32"}], kiln.weights = [], kiln.weights_bytes = 0 : i64} {
  func.func @main(%x: memref<2x8xf32> {kiln.name = "x"}, %y: memref<2x8xf32> {kiln.name = "y", kiln.output = 0 : i64}, %arena: memref<0xi8> {kiln.arena}, %weights: memref<0xi8> {kiln.weights}) {
    // expected-error @+1 {{'memref.copy' would run on the host between GPU kernels, which GPU plans cannot do}}
    memref.copy %x, %y : memref<2x8xf32> to memref<2x8xf32>
    return
  }
}

// -----

// A scalar expanded to a 1x1x1 view (a reduction over every axis that
// keeps them) has three dimensions of size 1.
// CHECK: kiln.kernels = [
// CHECK-SAME: launch = {args = [{base = "input", {{.*}}}, {base = "output", byte_offset = 0 : i64, index = 0 : i64, offset = 0 : i64, sizes = array<i64: 1, 1, 1>, strides = array<i64: 1, 1, 1>}], {{.*}}kernel = "sum"
module attributes {gpu.container_module, kiln.arena_bytes = 0 : i64, kiln.kernels = [{after = array<i64>, buffer = "y", bytes = 4 : i64, inputs = ["x"], kind = "reduction", layout = "", node = "", offset = 0 : i64, precision = "fp32"}], kiln.weights = [], kiln.weights_bytes = 0 : i64} {
  func.func @main(%x: memref<2x3x4xf32> {kiln.name = "x"}, %y: memref<f32> {kiln.name = "y", kiln.output = 0 : i64}, %arena: memref<0xi8> {kiln.arena}, %weights: memref<0xi8> {kiln.weights}) {
    %c1 = arith.constant 1 : index
    %kept = memref.expand_shape %y [] output_shape [1, 1, 1] : memref<f32> into memref<1x1x1xf32>
    gpu.launch_func @kernels::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<2x3x4xf32>, %kept : memref<1x1x1xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @sum(%in: memref<2x3x4xf32>, %out: memref<1x1x1xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A grid computed from the symbols is a program the runtime evaluates on a
// stack: a commutative step runs its deeper operand first, so that
// max(c, max(a, max(b, c))) holds two values at once, not four: b, c, max,
// a, max, c, max (Symbol is 1, Max 7).
// CHECK: grid_programs = [array<i64: 1, 1, 1, 2, 7, 0, 1, 0, 7, 0, 1, 2, 7, 0>, array<i64: 0, 1>, array<i64: 0, 1>]
module attributes {gpu.container_module, kiln.arena_bytes = 0 : i64, kiln.symbols = [#kiln.symbol<"a", 1, 8, 1>, #kiln.symbol<"b", 1, 8, 1>, #kiln.symbol<"c", 1, 8, 1>], kiln.kernels = [{after = array<i64>, buffer = "y", bytes = 64 : i64, inputs = [], kind = "fill", layout = "", node = "", offset = 0 : i64, precision = "fp32"}], kiln.weights = [], kiln.weights_bytes = 0 : i64} {
  func.func @main(%y: memref<2x8xf32> {kiln.name = "y", kiln.output = 0 : i64}, %arena: memref<0xi8> {kiln.arena}, %weights: memref<0xi8> {kiln.weights}, %a: index {kiln.symbol = "a"}, %b: index {kiln.symbol = "b"}, %c: index {kiln.symbol = "c"}) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %0 = arith.maxui %b, %c : index
    %1 = arith.maxui %a, %0 : index
    %2 = arith.maxui %c, %1 : index
    gpu.launch_func @kernels::@fill blocks in (%2, %c1, %c1) threads in (%c4, %c1, %c1) args(%y : memref<2x8xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @fill(%out: memref<2x8xf32>) kernel {
      gpu.return
    }
  }
}
