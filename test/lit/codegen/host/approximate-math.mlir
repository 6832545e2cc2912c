// RUN: kiln-opt %s --kiln-approximate-math | FileCheck %s

// exp, tanh and erf on f32, scalar or vector, become arithmetic: no math
// op is left for LLVM to turn into libm calls. sqrt has an instruction and
// stays.
// CHECK-LABEL: func.func @functions(
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: math.sqrt
// CHECK: return
func.func @functions(%x: f32, %v: vector<16xf32>) -> (f32, vector<16xf32>, vector<16xf32>, f32) {
  %e = math.exp %x : f32
  %t = math.tanh %v : vector<16xf32>
  %r = math.erf %v : vector<16xf32>
  %s = math.sqrt %x : f32
  return %e, %t, %r, %s : f32, vector<16xf32>, vector<16xf32>, f32
}
