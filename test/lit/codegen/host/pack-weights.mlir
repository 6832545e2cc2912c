// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-pack-weights{panel-width=4}))" | FileCheck %s

// A constant B of 2 x 6 in panels of 4 columns: B'[2][2][4], zeros past
// the sixth column, read as B'[n floordiv 4, k, n mod 4].
// CHECK-DAG: #[[PACKED:.+]] = affine_map<(d0, d1, d2) -> (d2 floordiv 4, d1, d2 mod 4)>
// CHECK-LABEL: func.func @main(
// CHECK: %[[B:.+]] = arith.constant dense<{{\[}}{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00], [6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00]], {{\[}}[4.000000e+00, 5.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+01, 1.100000e+01, 0.000000e+00, 0.000000e+00]]]> : tensor<2x2x4xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[PACKED]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %[[B]] : tensor<3x2xf32>, tensor<2x2x4xf32>)
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @main(%x: tensor<3x2xf32>, %init: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]> : tensor<2x6xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<3x2xf32>, tensor<2x6xf32>) outs(%init : tensor<3x6xf32>) {
  ^bb0(%in: f32, %weight: f32, %out: f32):
    %p = arith.mulf %in, %weight : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// No wider than a panel, or B not a constant: left alone.
// CHECK-LABEL: func.func @narrow(
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<2x4xf32>)
// CHECK-LABEL: func.func @computed(
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<2x6xf32>)
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @narrow(%x: tensor<3x2xf32>, %init: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<3x2xf32>, tensor<2x4xf32>) outs(%init : tensor<3x4xf32>) {
  ^bb0(%in: f32, %weight: f32, %out: f32):
    %p = arith.mulf %in, %weight : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
func.func @computed(%x: tensor<3x2xf32>, %w: tensor<2x6xf32>, %init: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<3x2xf32>, tensor<2x6xf32>) outs(%init : tensor<3x6xf32>) {
  ^bb0(%in: f32, %weight: f32, %out: f32):
    %p = arith.mulf %in, %weight : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// A constant A of 5 x 2 (a convolution's weights, seen through reshapes)
// in groups of 2 rows: A'[3][2][2], zeros past the fifth row, read as
// A'[m floordiv 2, k, m mod 2]; the reshapes and the old weights go.
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-pack-weights{panel-width=4 row-group=2}))" | FileCheck %s --check-prefix=ROWS
// ROWS: #[[GROUPED:.+]] = affine_map<(d0, d1, d2) -> (d0 floordiv 2, d1, d0 mod 2)>
// ROWS-LABEL: func.func @rows(
// ROWS-NOT: tensor.expand_shape
// ROWS: %[[A:.+]] = arith.constant dense<{{\[}}{{\[}}[0.000000e+00, 2.000000e+00], [1.000000e+00, 3.000000e+00]], {{\[}}[4.000000e+00, 6.000000e+00], [5.000000e+00, 7.000000e+00]], {{\[}}[8.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00]]]> : tensor<3x2x2xf32>
// ROWS-NOT: tensor.expand_shape
// ROWS: linalg.generic {indexing_maps = [#[[GROUPED]], #{{.+}}, #{{.+}}]
// ROWS-SAME: ins(%[[A]], %{{.+}} : tensor<3x2x2xf32>, tensor<2x3xf32>)
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @rows(%x: tensor<2x3xf32>, %init: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %w = arith.constant dense<[[[[0.0]], [[1.0]]], [[[2.0]], [[3.0]]], [[[4.0]], [[5.0]]], [[[6.0]], [[7.0]]], [[[8.0]], [[9.0]]]]> : tensor<5x2x1x1xf32>
  %flat = tensor.collapse_shape %w [[0, 1, 2, 3]] : tensor<5x2x1x1xf32> into tensor<10xf32>
  %a = tensor.expand_shape %flat [[0, 1]] output_shape [5, 2] : tensor<10xf32> into tensor<5x2xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %x : tensor<5x2xf32>, tensor<2x3xf32>) outs(%init : tensor<5x3xf32>) {
  ^bb0(%weight: f32, %in: f32, %out: f32):
    %p = arith.mulf %weight, %in : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
