// RUN: kiln-opt %s --kiln-bufferize | FileCheck %s

// Function boundaries become identity-layout memrefs, and the copy that
// padding needs is a linalg.copy (a kernel on GPUs), not a memref.copy.
// CHECK-LABEL: func.func @pad(
// CHECK-SAME: %[[X:.+]]: memref<1x3x8x8xf32>) -> memref<1x3x10x10xf32>
// CHECK: %[[BUF:.+]] = memref.alloc() {{.*}}: memref<1x3x10x10xf32>
// CHECK: %[[VIEW:.+]] = memref.subview %[[BUF]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: linalg.copy ins(%[[X]] : memref<1x3x8x8xf32>) outs(%[[VIEW]] :
// CHECK-NOT: memref.copy
// CHECK: return %[[BUF]]
func.func @pad(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  return %0 : tensor<1x3x10x10xf32>
}

// A result that goes into a slice of a concatenation is computed in that
// slice: the empty tensor it was computed in becomes the slice, so no
// buffer of its own is allocated, and the copy of the slice onto itself
// that bufferizing leaves is erased.
// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<2x4xf32>, %[[B:[a-z0-9]+]]: memref<2x4xf32>)
// CHECK: %[[BUF:.+]] = memref.alloc() {{.*}}: memref<4x4xf32>
// CHECK: %[[TOP:.+]] = memref.subview %[[BUF]][0, 0] [2, 4] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[A]] : memref<2x4xf32>) outs(%[[TOP]] :
// CHECK: %[[BOTTOM:.+]] = memref.subview %[[BUF]][2, 0] [2, 4] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[B]] : memref<2x4xf32>) outs(%[[BOTTOM]] :
// CHECK-NOT: linalg.copy
// CHECK: return %[[BUF]]
#identity = affine_map<(d0, d1) -> (d0, d1)>
func.func @concat(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4xf32>
  %r0 = linalg.generic {indexing_maps = [#identity, #identity], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x4xf32>
  %r1 = linalg.generic {indexing_maps = [#identity, #identity], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %c = tensor.empty() : tensor<4x4xf32>
  %c0 = tensor.insert_slice %r0 into %c[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  %c1 = tensor.insert_slice %r1 into %c0[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  return %c1 : tensor<4x4xf32>
}

// A concatenation of a concatenation (DenseNet's growing features when
// exported nested): the first is copied whole into the second's start, so
// it becomes a view of that start instead, and nothing is copied but the
// input that has no buffer of kiln's (%b).
// CHECK-LABEL: func.func @nested(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<2x4xf32>, %[[B:[a-z0-9]+]]: memref<2x4xf32>)
// CHECK: %[[BUF:.+]] = memref.alloc() {{.*}}: memref<6x4xf32>
// CHECK: %[[FIRST:.+]] = memref.reinterpret_cast %[[BUF]] to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<6x4xf32> to memref<4x4xf32>
// CHECK-NOT: memref.alloc
// CHECK: linalg.copy ins(%[[B]] : memref<2x4xf32>)
// CHECK-NOT: linalg.copy
// CHECK: return %[[BUF]]
#identity2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @nested(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4xf32>
  %r0 = linalg.generic {indexing_maps = [#identity2, #identity2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %c = tensor.empty() : tensor<4x4xf32>
  %c0 = tensor.insert_slice %r0 into %c[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  %first = tensor.insert_slice %b into %c0[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  %top = tensor.extract_slice %first[1, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %r2 = linalg.generic {indexing_maps = [#identity2, #identity2], iterator_types = ["parallel", "parallel"]}
      ins(%top : tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %d = tensor.empty() : tensor<6x4xf32>
  %d0 = tensor.insert_slice %first into %d[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<6x4xf32>
  %second = tensor.insert_slice %r2 into %d0[4, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<6x4xf32>
  return %second : tensor<6x4xf32>
}

// A concatenation of every earlier input again (DenseNet's, as exported):
// the first (%c) is written only by copies, and the second (%d) repeats
// them at the same places, so %c becomes a view of %d's start and %d's
// repeated copies go; %d's own slice ([4, 6), computed from %c) is
// elsewhere. Each input is copied once.
// CHECK-LABEL: func.func @flat(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x4xf32>)
// CHECK: %[[F0:.+]] = memref.alloc() : memref<2x4xf32>
// CHECK: %[[D:.+]] = memref.alloc() : memref<6x4xf32>
// CHECK: %[[C:.+]] = memref.reinterpret_cast %[[D]] to offset: [0], sizes: [4, 4], strides: [4, 1]
// CHECK-COUNT-2: linalg.copy
// CHECK-NOT: linalg.copy
// CHECK: return %[[D]]
#id4 = affine_map<(d0, d1) -> (d0, d1)>
func.func @flat(%x: memref<2x4xf32>) -> memref<6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %f0 = memref.alloc() : memref<2x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x4xf32>) outs(%f0 : memref<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  %c = memref.alloc() : memref<4x4xf32>
  %c0 = memref.subview %c[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  linalg.copy ins(%x : memref<2x4xf32>) outs(%c0 : memref<2x4xf32, strided<[4, 1]>>)
  %c1 = memref.subview %c[2, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  linalg.copy ins(%f0 : memref<2x4xf32>) outs(%c1 : memref<2x4xf32, strided<[4, 1], offset: 8>>)
  %middle = memref.subview %c[1, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 4>>
  %d = memref.alloc() : memref<6x4xf32>
  %d2 = memref.subview %d[4, 0] [2, 4] [1, 1] : memref<6x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 16>>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%middle : memref<2x4xf32, strided<[4, 1], offset: 4>>) outs(%d2 : memref<2x4xf32, strided<[4, 1], offset: 16>>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %zero : f32
    linalg.yield %m : f32
  }
  %d0 = memref.subview %d[0, 0] [2, 4] [1, 1] : memref<6x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  linalg.copy ins(%x : memref<2x4xf32>) outs(%d0 : memref<2x4xf32, strided<[4, 1]>>)
  %d1 = memref.subview %d[2, 0] [2, 4] [1, 1] : memref<6x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  linalg.copy ins(%f0 : memref<2x4xf32>) outs(%d1 : memref<2x4xf32, strided<[4, 1], offset: 8>>)
  return %d : memref<6x4xf32>
}

// The same with a batch a run gives, the slices' sizes read off the
// tensors inserted (tensor.dim), as a symbolic Concat is lowered: they are
// the batch the empty tensors were made with, so each result is still
// computed in its slice.
// CHECK-LABEL: func.func @concat_of_a_run_s_batch(
// CHECK-SAME: %[[RUN_N:[a-z0-9]+]]: index)
// CHECK: %[[RUN_BUF:.+]] = memref.alloc(%[[RUN_N]]) {{.*}}: memref<?x8xf32>
// CHECK: %[[LEFT:.+]] = memref.subview %[[RUN_BUF]][0, 0] [%[[RUN_N]], 4] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[LEFT]] :
// CHECK: %[[RIGHT:.+]] = memref.subview %[[RUN_BUF]][0, %{{.+}}] [%[[RUN_N]], 4] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[RIGHT]] :
// CHECK-NOT: linalg.copy
// CHECK: return %[[RUN_BUF]]
func.func @concat_of_a_run_s_batch(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %n: index) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %e0 = tensor.empty(%n) : tensor<?x4xf32>
  %r0 = linalg.generic {indexing_maps = [#identity, #identity], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x4xf32>) outs(%e0 : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x4xf32>
  %e1 = tensor.empty(%n) : tensor<?x4xf32>
  %r1 = linalg.generic {indexing_maps = [#identity, #identity], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<?x4xf32>) outs(%e1 : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x4xf32>
  %c = tensor.empty(%n) : tensor<?x8xf32>
  %d0 = tensor.dim %r0, %c0 : tensor<?x4xf32>
  %i0 = tensor.insert_slice %r0 into %c[0, 0] [%d0, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  %d1 = tensor.dim %r1, %c0 : tensor<?x4xf32>
  %i1 = tensor.insert_slice %r1 into %i0[0, %c4] [%d1, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  return %i1 : tensor<?x8xf32>
}
