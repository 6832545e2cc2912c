// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-drop-empty-buffers))' | FileCheck %s

// A kernel over buffers without elements goes, and the empty arguments it
// used become flat; buffers with elements and their kernels stay.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.+}}: memref<0xi64>, %{{.+}}: memref<0xi64>, %[[KEEP:.+]]: memref<2x5xf32>, %[[OUT:.+]]: memref<2x5xf32>)
// CHECK-NOT: linalg.generic
// CHECK: linalg.copy ins(%[[KEEP]] : memref<2x5xf32>) outs(%[[OUT]] : memref<2x5xf32>)
// CHECK-NEXT: return
func.func @main(%x: memref<3x0x5xi64>, %y: memref<3x0x5xi64>, %a: memref<2x5xf32>, %b: memref<2x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<3x0x5xi64>) outs(%y : memref<3x0x5xi64>) {
  ^bb0(%in: i64, %out: i64):
    linalg.yield %in : i64
  }
  linalg.copy ins(%a : memref<2x5xf32>) outs(%b : memref<2x5xf32>)
  return
}
