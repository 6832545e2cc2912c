// RUN: kiln-opt %s --kiln-lower-to-llvm --reconcile-unrealized-casts | FileCheck %s

// One conversion takes every dialect the host code holds to LLVM: memref
// arguments become bare pointers, a mask compares a step vector with its
// bound, a rank-1 transfer is a load, bf16 widens with integer shifts (no
// compiler-rt), arith ops without an LLVM instruction (ceildivsi, maximumf)
// expand, vector.fma is LLVM's multiply-add, and no op of another dialect
// is left.
// CHECK: llvm.func @kernel(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %[[N:.+]]: i64)
// CHECK-NOT: {{(vector|arith|memref|cf|func|index|ub)\.}}
// CHECK: llvm.icmp "sgt"
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> vector<16xbf16>
// CHECK: llvm.shl
// CHECK: llvm.intr.masked.load
// CHECK: llvm.intr.fmuladd
// CHECK: llvm.fcmp "ugt"
// CHECK: llvm.sdiv %[[N]]
// CHECK: llvm.intr.masked.store
// CHECK-NOT: {{(vector|arith|memref|cf|func|index|ub)\.}}
// CHECK: llvm.return
func.func @kernel(%out: memref<64xf32>, %in: memref<64xbf16>, %w: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : bf16
  %mask = vector.create_mask %n : vector<16xi1>
  %h = vector.transfer_read %in[%c0], %pad {in_bounds = [true]} : memref<64xbf16>, vector<16xbf16>
  %x = arith.extf %h : vector<16xbf16> to vector<16xf32>
  %v = vector.maskedload %w[%c0], %mask, %x : memref<64xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
  %f = vector.fma %x, %v, %v : vector<16xf32>
  %m = arith.maximumf %f, %x : vector<16xf32>
  %q = arith.ceildivsi %n, %c16 : index
  cf.br ^store(%q : index)
^store(%at: index):
  vector.maskedstore %out[%at], %mask, %m : memref<64xf32>, vector<16xi1>, vector<16xf32>
  return
}
