// RUN: kiln-opt %s --split-input-file --kiln-inline-scalar-operands | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#one = affine_map<(d0, d1) -> (0)>

// A mean over rows the run gives divides by a count built into a
// one-element tensor: the body reads the count itself, so the kernel takes
// a scalar rather than a buffer of one element.
// CHECK-LABEL: func.func @count(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[N:[a-z0-9]+]]: f32)
// CHECK-NOT: tensor.from_elements
// CHECK: linalg.generic {{.+}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK: ^bb0(%[[A:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32):
// CHECK: arith.divf %[[A]], %[[N]] : f32
func.func @count(%x: tensor<4x8xf32>, %n: f32) -> tensor<4x8xf32> {
  %count = tensor.from_elements %n : tensor<1xf32>
  %init = tensor.empty() : tensor<4x8xf32>
  %mean = linalg.generic {indexing_maps = [#id, #one, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %count : tensor<4x8xf32>, tensor<1xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.divf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %mean : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Two elements, read at the loop's row, stay a tensor.
// CHECK-LABEL: func.func @pair(
// CHECK: %[[PAIR:.+]] = tensor.from_elements
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[PAIR]] : tensor<2x8xf32>, tensor<2xf32>)
func.func @pair(%x: tensor<2x8xf32>, %a: f32, %b: f32) -> tensor<2x8xf32> {
  %pair = tensor.from_elements %a, %b : tensor<2xf32>
  %init = tensor.empty() : tensor<2x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %pair : tensor<2x8xf32>, tensor<2xf32>) outs(%init : tensor<2x8xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %r = arith.mulf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  return %scaled : tensor<2x8xf32>
}
