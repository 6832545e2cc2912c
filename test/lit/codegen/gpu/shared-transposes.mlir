// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-shared-transposes))' | FileCheck %s

// A CNN's NCHW input to NHWC: the output's innermost dimension is the
// input's channels (3), so a tile is 3 channels by 32 columns, padded to
// 33. 224 rows times 7 tiles of columns: 1568 blocks of 256 threads. The
// threads read rows of the input's columns into the tile, meet at the
// barrier, and write the tile's columns (the output's channels) out.
// CHECK-LABEL: func.func @nchw_to_nhwc(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x3x224x224xf32>, %[[Y:[a-z0-9]+]]: memref<1x224x224x3xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: gpu.launch blocks(%[[BLOCK:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C1568:.+]], %{{.+}} = %[[C1:.+]], %{{.+}} = %[[C1]]) threads(%[[THREAD:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C256:.+]], %{{.+}} = %[[C1]], %{{.+}} = %[[C1]]) workgroup(%[[TILE:.+]] : memref<3x33xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.+}} = %[[THREAD]] to %{{.+}} step %[[C256]]
// CHECK: scf.if
// CHECK: %[[READ:.+]] = memref.load %[[X]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x3x224x224xf32>
// CHECK: memref.store %[[READ]], %[[TILE]][%{{.+}}, %{{.+}}]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %[[THREAD]] to %{{.+}} step %[[C256]]
// CHECK: scf.if
// CHECK: %[[WRITE:.+]] = memref.load %[[TILE]][%{{.+}}, %{{.+}}]
// CHECK: memref.store %[[WRITE]], %[[Y]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x224x224x3xf32>
// CHECK: kiln.kernel = "transpose"
func.func @nchw_to_nhwc(%x: memref<1x3x224x224xf32>, %y: memref<1x224x224x3xf32>) {
  linalg.transpose ins(%x : memref<1x3x224x224xf32>) outs(%y : memref<1x224x224x3xf32>)
      permutation = [0, 2, 3, 1]
  return
}

// -----

// A matrix whose sides are not multiples of 32: tiles of 32x32 (padded to
// 33), 3 by 2 of them, those at the edges partly outside. The tile's
// element is the row (of the input) and column the thread's number gives:
// when reading, its quotient and remainder by 32 (the input's innermost
// tile side); when writing, its remainder and quotient, so that
// consecutive threads write consecutive rows.
// CHECK-LABEL: func.func @matrix(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<70x40xf16>, %[[Y:[a-z0-9]+]]: memref<40x70xf16>)
// CHECK: gpu.launch blocks({{.+}}) in (%{{.+}} = %c6, %{{.+}}, %{{.+}}) threads({{.+}}) workgroup(%[[TILE:.+]] : memref<32x33xf16, #gpu.address_space<workgroup>>)
// CHECK: scf.for %[[E:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[ROW:[0-9]+]] = arith.divui %[[E]], %c32{{.*}} : index
// CHECK: %[[COLUMN:[0-9]+]] = arith.remui %[[E]], %c32{{.*}} : index
// CHECK: arith.andi
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.+}}, %[[TILE]][%[[ROW]], %[[COLUMN]]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[F:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[ROW2:[0-9]+]] = arith.remui %[[F]], %c32{{.*}} : index
// CHECK: %[[COLUMN2:[0-9]+]] = arith.divui %[[F]], %c32{{.*}} : index
// CHECK: memref.load %[[TILE]][%[[ROW2]], %[[COLUMN2]]]
// CHECK: %[[AT_ROW:[0-9]+]] = arith.addi %{{.+}}, %[[ROW2]] : index
// CHECK: %[[AT_COLUMN:[0-9]+]] = arith.addi %{{.+}}, %[[COLUMN2]] : index
// CHECK: memref.store %{{.+}}, %[[Y]][%[[AT_COLUMN]], %[[AT_ROW]]] : memref<40x70xf16>
func.func @matrix(%x: memref<70x40xf16>, %y: memref<40x70xf16>) {
  linalg.transpose ins(%x : memref<70x40xf16>) outs(%y : memref<40x70xf16>)
      permutation = [1, 0]
  return
}

// -----

// Left to the loop kernels: BERT's heads back in place (the innermost
// dimension stays, so each side is already contiguous), a transpose that
// moves only unit dimensions, and one of a vector.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: gpu.launch
// CHECK: linalg.transpose
// CHECK: linalg.transpose
// CHECK: linalg.transpose
func.func @left_alone(%x: memref<1x12x64x64xf32>, %y: memref<1x64x12x64xf32>,
                      %p: memref<1x2048x1x1xf32>, %q: memref<1x1x1x2048xf32>,
                      %v: memref<8xf32>, %w: memref<8xf32>) {
  linalg.transpose ins(%x : memref<1x12x64x64xf32>) outs(%y : memref<1x64x12x64xf32>)
      permutation = [0, 2, 1, 3]
  linalg.transpose ins(%p : memref<1x2048x1x1xf32>) outs(%q : memref<1x1x1x2048xf32>)
      permutation = [0, 2, 3, 1]
  linalg.transpose ins(%v : memref<8xf32>) outs(%w : memref<8xf32>) permutation = [0]
  return
}
