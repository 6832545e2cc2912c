// RUN: kiln-opt %s --kiln-plan-memory | FileCheck %s

// A size that reaches the symbol through many paths (here 2^40: each
// value is the maximum of the one before with itself, as the offsets of a
// plan of many live buffers are maxima of the offsets below them) has its
// bounds computed once per value: walking every path, a symbolic
// DenseNet-121 compile ran past an hour. The buffer is planned at the
// symbol's largest value (8 floats, 64 bytes with the alignment).
// CHECK: module attributes {kiln.arena_bytes = 64 : i64
module attributes {kiln.symbols = [#kiln.symbol<"batch", 1, 8, 1>]} {
func.func @main(%n: index {kiln.symbol = "batch"}) {
  %zero = arith.constant 0.0 : f32
  %s0 = arith.maxui %n, %n : index
  %s1 = arith.maxui %s0, %s0 : index
  %s2 = arith.maxui %s1, %s1 : index
  %s3 = arith.maxui %s2, %s2 : index
  %s4 = arith.maxui %s3, %s3 : index
  %s5 = arith.maxui %s4, %s4 : index
  %s6 = arith.maxui %s5, %s5 : index
  %s7 = arith.maxui %s6, %s6 : index
  %s8 = arith.maxui %s7, %s7 : index
  %s9 = arith.maxui %s8, %s8 : index
  %s10 = arith.maxui %s9, %s9 : index
  %s11 = arith.maxui %s10, %s10 : index
  %s12 = arith.maxui %s11, %s11 : index
  %s13 = arith.maxui %s12, %s12 : index
  %s14 = arith.maxui %s13, %s13 : index
  %s15 = arith.maxui %s14, %s14 : index
  %s16 = arith.maxui %s15, %s15 : index
  %s17 = arith.maxui %s16, %s16 : index
  %s18 = arith.maxui %s17, %s17 : index
  %s19 = arith.maxui %s18, %s18 : index
  %s20 = arith.maxui %s19, %s19 : index
  %s21 = arith.maxui %s20, %s20 : index
  %s22 = arith.maxui %s21, %s21 : index
  %s23 = arith.maxui %s22, %s22 : index
  %s24 = arith.maxui %s23, %s23 : index
  %s25 = arith.maxui %s24, %s24 : index
  %s26 = arith.maxui %s25, %s25 : index
  %s27 = arith.maxui %s26, %s26 : index
  %s28 = arith.maxui %s27, %s27 : index
  %s29 = arith.maxui %s28, %s28 : index
  %s30 = arith.maxui %s29, %s29 : index
  %s31 = arith.maxui %s30, %s30 : index
  %s32 = arith.maxui %s31, %s31 : index
  %s33 = arith.maxui %s32, %s32 : index
  %s34 = arith.maxui %s33, %s33 : index
  %s35 = arith.maxui %s34, %s34 : index
  %s36 = arith.maxui %s35, %s35 : index
  %s37 = arith.maxui %s36, %s36 : index
  %s38 = arith.maxui %s37, %s37 : index
  %s39 = arith.maxui %s38, %s38 : index
  %a = memref.alloc(%s39) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<?xf32>)
  return
}
}
