// RUN: kiln-opt %s --kiln-plan-memory | FileCheck %s

// A buffer lives until the last kernel that takes a tensor map of it: %a's
// map is made before %b is allocated, but the launch that copies from it
// comes after, so %b cannot take %a's bytes. %c, allocated after the
// launch, can.
// CHECK: module attributes {kiln.arena_bytes = 32768 : i64
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[A:.+]] = memref.view %{{.+}}[%[[C0]]][] : memref<32768xi8> to memref<64x64xf32>
// CHECK: %[[MAP:.+]] = kiln.tensor_map %[[A]]
// CHECK: %[[C16384:.+]] = arith.constant 16384 : index
// CHECK: %[[B:.+]] = memref.view %{{.+}}[%[[C16384]]][] : memref<32768xi8> to memref<64x64xf32>
// CHECK: gpu.launch
// CHECK: %[[AGAIN:.+]] = arith.constant 0 : index
// CHECK: %[[C:.+]] = memref.view %{{.+}}[%[[AGAIN]]][] : memref<32768xi8> to memref<64x64xf32>
func.func @main(%x: memref<64x64xf32> {kiln.name = "x"}) -> (memref<64x64xf32> {kiln.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1 : index
  %a = memref.alloc() : memref<64x64xf32>
  linalg.copy ins(%x : memref<64x64xf32>) outs(%a : memref<64x64xf32>)
  %map = kiln.tensor_map %a {box = array<i64: 32, 64>, dims = array<i64: 64, 64>, strides = array<i64: 64>, swizzle = 128 : i64} : memref<64x64xf32>
  %b = memref.alloc() : memref<64x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    llvm.inline_asm has_side_effects "prefetch.tensormap [$0];", "l" %map : (i64) -> ()
    memref.store %zero, %b[%tx, %ty] : memref<64x64xf32>
    gpu.terminator
  }
  %c = memref.alloc() : memref<64x64xf32>
  linalg.copy ins(%b : memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  %y = memref.alloc() : memref<64x64xf32>
  linalg.copy ins(%c : memref<64x64xf32>) outs(%y : memref<64x64xf32>)
  return %y : memref<64x64xf32>
}
