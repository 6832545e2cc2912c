// RUN: kiln-opt %s --kiln-lower-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

// A padded convolution with bias: im2col columns (each output position's
// input window: channel, kh, kw by oh, ow), computed from the input's
// indices and zero in the padding (checked along both spatial dimensions);
// one contraction n, g, f, o | (c, k) into zeros, whose innermost parallel
// loop walks both the output and the columns; the bias added after.
// CHECK-DAG: #[[ID7:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
// CHECK-DAG: #[[WMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[COLS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CHANNEL:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[WINDOWS:.+]] = linalg.generic {indexing_maps = [#[[ID7]]], {{.+}} outs(%{{.+}} : tensor<1x1x3x3x3x8x5xf32>)
// CHECK: %[[ROW:.+]] = arith.subi %{{.+}}, %[[C1:.+]] : index
// CHECK: %[[ROW_IN:.+]] = arith.andi
// CHECK: %[[ROW_AT:.+]] = arith.select %[[ROW_IN]], %[[ROW]], %[[C0:.+]] : index
// CHECK: %[[COL:.+]] = arith.subi %{{.+}}, %[[C2:.+]] : index
// CHECK: %[[COL_IN:.+]] = arith.andi
// CHECK: %[[COL_AT:.+]] = arith.select %[[COL_IN]], %[[COL]], %[[C0]] : index
// CHECK: %[[IN:.+]] = arith.andi %[[ROW_IN]], %[[COL_IN]] : i1
// CHECK: %[[READ:.+]] = tensor.extract %[[X]][%[[C0]], %{{.+}}, %[[ROW_AT]], %[[COL_AT]]]
// CHECK: %[[CELL:.+]] = arith.select %[[IN]], %[[READ]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[CELL]]
// CHECK: %[[COLUMNS:.+]] = tensor.collapse_shape %[[WINDOWS]] {{\[\[}}0], [1], [2, 3, 4], [5, 6]] : tensor<1x1x3x3x3x8x5xf32> into tensor<1x1x27x40xf32>
// CHECK: %[[WEIGHTS:.+]] = tensor.expand_shape {{.+}} into tensor<1x4x27xf32>
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<1x4x8x5xf32>)
// CHECK: %[[GROUPED:.+]] = tensor.expand_shape {{.+}} into tensor<1x1x4x40xf32>
// CHECK: %[[CONV:.+]] = linalg.generic {indexing_maps = [#[[WMAP]], #[[COLS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[WEIGHTS]], %[[COLUMNS]] : tensor<1x4x27xf32>, tensor<1x1x27x40xf32>) outs(%[[GROUPED]] : tensor<1x1x4x40xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[PRODUCT:.+]] = tensor.expand_shape {{.+}} into tensor<1x4x8x5xf32>
// CHECK: %[[RESULT:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[CHANNEL]], #[[ID4]]], {{.+}} ins(%[[PRODUCT]], %[[B]] : tensor<1x4x8x5xf32>, tensor<4xf32>)
// CHECK:   arith.addf
// CHECK: return %[[RESULT]]
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x5xf32> {
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 2, 1, 2>, strides = array<i64: 1, 2>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x5xf32>
  return %0 : tensor<1x4x8x5xf32>
}

// -----

// Without bias or padding the accumulator starts at zero. Its output rows
// are shorter than the input's, so its columns are no shifted rows.
// CHECK-LABEL: func.func @conv_plain
// CHECK-NOT: tensor.pad
// CHECK-NOT: kiln.im2col_shift
// CHECK: tensor<1x1x27x36xf32>
// CHECK: %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x4x6x6xf32>)
// CHECK: tensor.collapse_shape %[[FILL]]
func.func @conv_plain(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// At stride 1 with the output rows as long as the input's, each row of
// the columns is the input shifted: the gather says by which padding.
// CHECK-LABEL: func.func @conv_same
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<1x1x3x3x3x8x8xf32>) attrs = {kiln.im2col_shift = array<i64: 1, 1, 1>}
func.func @conv_same(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// At stride 2 along both dimensions each row of the columns is every other
// element of the input's rows: the gather says so, with its padding.
// CHECK-LABEL: func.func @conv_stride2
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<1x1x3x3x3x4x4xf32>) attrs = {kiln.im2col_shift = array<i64: 1, 1, 2>}
func.func @conv_stride2(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// A 1x1 convolution at stride 1 without padding reads its input as the
// columns: no window gathering.
// CHECK-LABEL: func.func @conv_pointwise
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x5x5xf32>,
// CHECK: %[[COLUMNS:.+]] = tensor.expand_shape {{.+}} into tensor<1x1x8x25xf32>
// CHECK-NOT: linalg.generic
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[COLUMNS]] : tensor<1x4x8xf32>, tensor<1x1x8x25xf32>)
func.func @conv_pointwise(%x: tensor<1x8x5x5xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<1x4x5x5xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x8x5x5xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}

// -----

// Elementwise ops become one linalg.generic each; a broadcast operand reads
// through a map that drops (or pins to 0) its missing dimensions.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:   arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK:   arith.mulf
// CHECK: linalg.generic
// CHECK:   arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK:   arith.maximumf
// CHECK:   arith.minimumf
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.mul %0, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %2 = kiln.relu %1 : tensor<2x3xf32>
  %3 = kiln.clip %2 {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// Weights become arith constants, which bufferization can place in memory.
// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant() -> tensor<2xf32> {
  %0 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A grouped convolution in NCHW (the host's layout) is a batch of
// products, one per group: the windows read input channels 2g and 2g + 1
// (two channels per group) at stride 2 and dilation 2.
// CHECK-LABEL: func.func @grouped_nchw
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x2x3x3x3x3xf32>)
// CHECK-DAG: %[[C:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[G:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[KH:.+]] = linalg.index 3 : index
// CHECK-DAG: %[[OH:.+]] = linalg.index 5 : index
// CHECK-DAG: %[[GC:.+]] = arith.muli %[[G]], %[[TWO:c2]] : index
// CHECK-DAG: %[[CHANNEL:.+]] = arith.addi %[[GC]], %[[C]] : index
// CHECK-DAG: arith.muli %[[KH]], %[[TWO]] : index
// CHECK-DAG: arith.muli %[[OH]], %[[TWO]] : index
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[CHANNEL]], %{{.+}}, %{{.+}}]
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<2x3x18xf32>, tensor<1x2x18x9xf32>) outs(%{{.+}} : tensor<1x2x3x9xf32>)
func.func @grouped_nchw(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// A depthwise convolution in NCHW is no product but a window per output:
// an all-parallel generic (n, c, oh, ow) whose body loops over kh and kw,
// reading channel c of the input at (oh * 2 + kh * 2 - 1, ow * 2 + kw * 2 -
// 1) and zero in the padding, times weight (c, 0, kh, kw).
// CHECK-LABEL: func.func @depthwise_nchw
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x8x8xf32>, %[[W:.+]]: tensor<4x1x3x3xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<1x4x3x3xf32>) attrs = {kiln.layout = "nchw"}
// CHECK: %[[C:.+]] = linalg.index 1 : index
// CHECK: scf.for %[[KH:.+]] = %{{.+}} iter_args
// CHECK: scf.for %[[KW:.+]] = %{{.+}} iter_args(%[[SUM:.+]] = %{{.+}}) -> (f32)
// CHECK: %[[IN:.+]] = tensor.extract %[[X]][%{{.+}}, %[[C]], %{{.+}}, %{{.+}}] : tensor<1x4x8x8xf32>
// CHECK: %[[CELL:.+]] = arith.select %{{.+}}, %[[IN]], %{{.+}} : f32
// CHECK: %[[WEIGHT:.+]] = tensor.extract %[[W]][%[[C]], %{{.+}}, %[[KH]], %[[KW]]] : tensor<4x1x3x3xf32>
// CHECK: %[[PRODUCT:.+]] = arith.mulf %[[CELL]], %[[WEIGHT]] : f32
// CHECK: arith.addf %[[SUM]], %[[PRODUCT]] : f32
// CHECK-NOT: linalg.generic
func.func @depthwise_nchw(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 2, 2>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// A channels-last convolution is one product with the output channels
// innermost: im2col rows (oh, ow by kh, kw, c) read from the NHWC input,
// times the weights as (kh, kw, c) x m; the bias follows along the last
// dimension.
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[WEIGHTS:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[LAST:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @conv_channels_last
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x8x3xf32>, %[[W:.+]]: tensor<3x3x3x6xf32>, %[[B:.+]]: tensor<6xf32>)
// CHECK: %[[C:.+]] = linalg.index 5 : index
// CHECK: tensor.extract %[[X]][%{{.+}}, %{{.+}}, %{{.+}}, %[[C]]] : tensor<1x8x8x3xf32>
// CHECK: %[[R:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2], [3, 4, 5]] : tensor<1x4x4x3x3x3xf32> into tensor<1x16x27xf32>
// CHECK: %[[WM:.+]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2], [3]] : tensor<3x3x3x6xf32> into tensor<27x6xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ROWS]], #[[WEIGHTS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[R]], %[[WM]] :
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[LAST]], #{{.+}}], {{.+}} ins(%{{.+}}, %[[B]] :
func.func @conv_channels_last(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x6xf32>, %b: tensor<6xf32>) -> tensor<1x4x4x6xf32> {
  %0 = kiln.conv %x, %w, %b {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x8x8x3xf32>, tensor<3x3x3x6xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return %0 : tensor<1x4x4x6xf32>
}

// -----

// A depthwise convolution channels last is no product but a window per
// output: an all-parallel generic (n, oh, ow, c) whose body loops over kh
// and kw, reading the input at (oh * 2 + kh - 1, ow * 2 + kw - 1) and zero
// in the padding, times the weight of that offset and channel; the bias
// follows.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @depthwise_channels_last
// CHECK-SAME: (%[[X:.+]]: tensor<1x5x5x3xf32>, %[[W:.+]]: tensor<3x3x1x3xf32>, %[[B:.+]]: tensor<3xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[DW:.+]] = linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<1x3x3x3xf32>) attrs = {kiln.layout = "nhwc"}
// CHECK: %[[C:.+]] = linalg.index 3 : index
// CHECK: scf.for %[[KH:.+]] = %{{.+}} iter_args(%[[OUTER:.+]] = %[[ZERO]]) -> (f32)
// CHECK: scf.for %[[KW:.+]] = %{{.+}} iter_args(%[[SUM:.+]] = %[[OUTER]]) -> (f32)
// CHECK: %[[IN:.+]] = tensor.extract %[[X]][%{{.+}}, %{{.+}}, %{{.+}}, %[[C]]] : tensor<1x5x5x3xf32>
// CHECK: %[[CELL:.+]] = arith.select %{{.+}}, %[[IN]], %[[ZERO]] : f32
// CHECK: %[[WEIGHT:.+]] = tensor.extract %[[W]][%[[KH]], %[[KW]], %{{.+}}, %[[C]]] : tensor<3x3x1x3xf32>
// CHECK: %[[PRODUCT:.+]] = arith.mulf %[[CELL]], %[[WEIGHT]] : f32
// CHECK: arith.addf %[[SUM]], %[[PRODUCT]] : f32
// CHECK: linalg.generic {{.+}} ins(%[[DW]], %[[B]] : tensor<1x3x3x3xf32>, tensor<3xf32>)
func.func @depthwise_channels_last(%x: tensor<1x5x5x3xf32>, %w: tensor<3x3x1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x3x3xf32> {
  %0 = kiln.conv %x, %w, %b {channels_last, dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x5x5x3xf32>, tensor<3x3x1x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

// Gemm reads a transposed A through its map; a transposed B is transposed
// first, so the product reads B along its rows. Alpha and beta apply in an
// epilogue.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: %[[BIN:[a-z0-9]+]]: tensor<7x5xf32>
// CHECK: %[[BT:.+]] = linalg.transpose ins(%[[BIN]] : tensor<7x5xf32>) outs(%{{.+}} : tensor<5x7xf32>) permutation = [1, 0]
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}}, %[[BT]] :
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.generic
// CHECK:   arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @gemm(%a: tensor<5x2xf32>, %b: tensor<7x5xf32>, %c: tensor<7xf32>) -> tensor<2x7xf32> {
  %0 = kiln.gemm %a, %b, %c {alpha = 2.0 : f32, beta = 0.5 : f32, transA = true, transB = true}
      : (tensor<5x2xf32>, tensor<7x5xf32>, tensor<7xf32>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// -----

// Batched MatMul broadcasts batch dimensions of size 1 (read at index 0).
// CHECK-DAG: #[[L:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[R:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[L]], #[[R]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// A 1-D right operand becomes a column and its dimension goes away after.
// CHECK: tensor.expand_shape {{.+}} into tensor<5x1xf32>
// CHECK: tensor.collapse_shape {{.+}} into tensor<4xf32>
func.func @matmul(%p: tensor<3x1x4x5xf32>, %q: tensor<2x5x6xf32>, %u: tensor<4x5xf32>, %v: tensor<5xf32>)
    -> (tensor<3x2x4x6xf32>, tensor<4xf32>) {
  %0 = kiln.matmul %p, %q : (tensor<3x1x4x5xf32>, tensor<2x5x6xf32>) -> tensor<3x2x4x6xf32>
  %1 = kiln.matmul %u, %v : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<3x2x4x6xf32>, tensor<4xf32>
}

// -----

// Where every batch index multiplies the same B (a weight of no batch, or
// of batch 1), A's batch dimensions become rows, from the innermost, while
// they are static and A's rows hold at most 2^18 elements: a 2x7x7 image's
// positions are 98 rows of one product; 3 x 256 rows of 1024 would be
// 786432 elements, and stay a batch of 3.
// CHECK-LABEL: func.func @shared_weights
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1, 2], [3]] : tensor<2x7x7x16xf32> into tensor<98x16xf32>
// CHECK: %[[W:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<1x16x32xf32> into tensor<16x32xf32>
// CHECK: %[[P:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[ROWS]], %[[W]] : tensor<98x16xf32>, tensor<16x32xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [2, 7, 7, 32]
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<3x256x1024xf32>, tensor<1024x8xf32>)
func.func @shared_weights(%x: tensor<2x7x7x16xf32>, %w: tensor<1x16x32xf32>, %y: tensor<3x256x1024xf32>,
                          %v: tensor<1024x8xf32>) -> (tensor<2x7x7x32xf32>, tensor<3x256x8xf32>) {
  %0 = kiln.matmul %x, %w : (tensor<2x7x7x16xf32>, tensor<1x16x32xf32>) -> tensor<2x7x7x32xf32>
  %1 = kiln.matmul %y, %v : (tensor<3x256x1024xf32>, tensor<1024x8xf32>) -> tensor<3x256x8xf32>
  return %0, %1 : tensor<2x7x7x32xf32>, tensor<3x256x8xf32>
}

// -----

// Softmax is two kernels: each row's maximum and sum of exp(x - max), one
// loop over the row each, then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[STATS:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}}, %{{.+}} : tensor<2x3x1xf32>, tensor<2x3x1xf32>)
// CHECK: %[[MAX:.+]] = scf.for
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = scf.for
// CHECK: arith.subf %{{.+}}, %[[MAX]] : f32
// CHECK: math.exp
// CHECK: linalg.yield %[[MAX]], %[[SUM]] : f32, f32
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[STATS]]#0, %[[STATS]]#1 :
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %0 = kiln.softmax %x {axis = 2 : i64} : tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// LayerNormalization is two kernels: each row's mean and standard
// deviation (of the centered values, one loop over the row each), then the
// normalization, scale and bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[STATS:.+]]:2 = linalg.generic {{.+}} outs(%{{.+}}, %{{.+}} : tensor<2x1x1xf32>, tensor<2x1x1xf32>)
// CHECK-COUNT-2: scf.for
// CHECK: math.fma
// CHECK: math.sqrt
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[STATS]]#0, %[[STATS]]#1, %{{.+}}, %{{.+}} :
// CHECK: arith.divf
func.func @layer_norm(%x: tensor<2x3x8xf32>, %g: tensor<3x8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %0 = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32}
      : (tensor<2x3x8xf32>, tensor<3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// Max pooling is one kernel: each output loops over its window, reading
// only cells inside the input (here both the declared pad of 1 and
// ceil_mode's overhang reach outside the 9 columns).
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[LOWEST:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK: scf.for {{.+}} iter_args(%[[OUTER:.+]] = %[[LOWEST]]) -> (f32)
// CHECK: scf.for {{.+}} iter_args(%[[RUNNING:.+]] = %[[OUTER]]) -> (f32)
// CHECK: %[[READ:.+]] = tensor.extract
// CHECK: %[[MAX:.+]] = arith.maximumf %[[RUNNING]], %[[READ]] : f32
// CHECK: arith.select %{{.+}}, %[[MAX]], %[[RUNNING]] : f32
func.func @max_pool(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32> {
  %0 = kiln.max_pool %x {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>,
                         kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}

// -----

// Average pooling counts the cells it adds, here those inside the input
// (the pad of 1 is not counted), and divides by the count at the end.
// CHECK-LABEL: func.func @average_pool
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[SUMS:.+]]:2 = scf.for {{.+}} -> (f32, f32)
// CHECK: %[[SUM:.+]] = arith.addf
// CHECK: arith.select %[[IN:.+]], %[[SUM]]
// CHECK: %[[COUNT:.+]] = arith.addf %{{.+}}, %[[ONE]] : f32
// CHECK: arith.select %[[IN]], %[[COUNT]]
// CHECK: %[[DIVISOR:.+]] = arith.maximumf %[[SUMS]]#1, %[[ONE]] : f32
// CHECK: arith.divf %[[SUMS]]#0, %[[DIVISOR]] : f32
func.func @average_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = kiln.average_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>,
                             kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A global average pooling's windows never overhang its input: the loops
// carry the sum alone, each read at the window's offsets (the one output
// position is 0), and the sum is divided by the 20 cells.
// CHECK-LABEL: func.func @global_average_pool
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x4x5xf32>)
// CHECK: %[[CELLS:.+]] = arith.constant 2.000000e+01 : f32
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x3x1x1xf32>)
// CHECK: %[[C:.+]] = linalg.index 1 : index
// CHECK: %[[SUM:.+]] = scf.for %[[KH:[a-z0-9]+]] = {{.+}} -> (f32)
// CHECK: scf.for %[[KW:[a-z0-9]+]] = {{.+}} iter_args(%[[RUNNING:.+]] = %{{.+}}) -> (f32)
// CHECK: %[[READ:.+]] = tensor.extract %[[X]][%{{.+}}, %[[C]], %[[KH]], %[[KW]]]
// CHECK: arith.addf %[[RUNNING]], %[[READ]] : f32
// CHECK: arith.divf %[[SUM]], %[[CELLS]] : f32
func.func @global_average_pool(%x: tensor<1x3x4x5xf32>) -> tensor<1x3x1x1xf32> {
  %0 = kiln.global_average_pool %x : (tensor<1x3x4x5xf32>) -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<4x3x2xf32>) permutation = [2, 1, 0]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 4] [2, 3, 4] [1, 1, 1]
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0] [2, 3, 1] [1, 1, 1]
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 1] [2, 3, 3] [1, 1, 1]
// A negative step reads start + i * step.
// CHECK: linalg.generic
// CHECK:   linalg.index 2
// CHECK:   arith.muli
// CHECK:   tensor.extract
func.func @data_movement(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<4x3x2xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x3xf32>, tensor<2x3x2xf32>) {
  %0 = kiln.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kiln.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %2 = kiln.concat %x, %x {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  %3:2 = kiln.split %x {axis = 2 : i64, sizes = array<i64: 1, 3>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x3xf32>)
  %4 = kiln.slice %x {starts = array<i64: 0, 0, 3>, ends = array<i64: 2, 3, -1>, steps = array<i64: 1, 1, -2>}
      : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
  return %0, %1, %2, %3#0, %3#1, %4 : tensor<6x4xf32>, tensor<4x3x2xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x3xf32>, tensor<2x3x2xf32>
}

// -----

// An empty slice is an empty tensor, even one starting past the end.
// CHECK-LABEL: func.func @empty_slice
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<2x0xf32>
// CHECK: return %[[EMPTY]]
func.func @empty_slice(%x: tensor<2x10xf32>) -> tensor<2x0xf32> {
  %0 = kiln.slice %x {starts = array<i64: 0, 10>, ends = array<i64: 2, 10>, steps = array<i64: 1, 1>} : (tensor<2x10xf32>) -> tensor<2x0xf32>
  return %0 : tensor<2x0xf32>
}

// -----

// Gather reads at the index, made non-negative and clamped into the axis.
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<1x5xi64>)
// CHECK:   arith.index_cast
// CHECK:   arith.select
// CHECK:   arith.maxsi
// CHECK:   arith.minsi
// CHECK:   tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<30x8xf32>
func.func @gather(%table: tensor<30x8xf32>, %ids: tensor<1x5xi64>) -> tensor<1x5x8xf32> {
  %0 = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<30x8xf32>, tensor<1x5xi64>) -> tensor<1x5x8xf32>
  return %0 : tensor<1x5x8xf32>
}

// -----

// Constant padding crops negative pads first; reflect mirrors indices.
// CHECK-LABEL: func.func @pad
// CHECK: tensor.extract_slice %{{.+}}[0, 1] [2, 3] [1, 1] : tensor<2x4xf32> to tensor<2x3xf32>
// CHECK: tensor.pad %{{.+}} low[1, 0] high[0, 2]
// CHECK:   tensor.yield %{{.+}} : f32
// CHECK: linalg.generic
// CHECK:   arith.maxsi
// CHECK:   arith.minsi
// CHECK:   tensor.extract
func.func @pad(%x: tensor<2x4xf32>) -> (tensor<3x5xf32>, tensor<2x6xf32>) {
  %0 = kiln.pad %x {mode = #kiln.pad_mode<constant>, pads = array<i64: 1, -1, 0, 2>, value = 1.5 : f64}
      : (tensor<2x4xf32>) -> tensor<3x5xf32>
  %1 = kiln.pad %x {mode = #kiln.pad_mode<reflect>, pads = array<i64: 0, 1, 0, 1>, value = 0.0 : f64}
      : (tensor<2x4xf32>) -> tensor<2x6xf32>
  return %0, %1 : tensor<3x5xf32>, tensor<2x6xf32>
}

// -----

// Casts follow ONNX: to bool tests for non-zero, from bool is 0 or 1.
// CHECK-LABEL: func.func @casts
// CHECK: arith.sitofp %{{.+}} : i64 to f32
// CHECK: arith.cmpf une
// CHECK: arith.uitofp %{{.+}} : i1 to f16
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : i64
// CHECK: arith.select
func.func @casts(%i: tensor<4xi64>, %f: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xi64>) {
  %0 = kiln.cast %i {to = f32} : tensor<4xi64> -> tensor<4xf32>
  %1 = kiln.cast %f {to = i1} : tensor<4xf32> -> tensor<4xi1>
  %2 = kiln.cast %1 {to = f16} : tensor<4xi1> -> tensor<4xf16>
  %3 = kiln.equal %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %4 = kiln.where %3, %i, %i : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %2, %4 : tensor<4xf32>, tensor<4xf16>, tensor<4xi64>
}

// -----

// Integer division and remainder never trap: a zero divisor, and the most
// negative value over -1, divide by 1 instead, and a division by zero gives
// zero. Mod without fmod moves a non-zero remainder to the divisor's sign.
// CHECK-LABEL: func.func @integer_division
// CHECK: linalg.generic
// CHECK: arith.cmpi eq
// CHECK: arith.ori
// CHECK: %[[SAFE:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : i32
// CHECK: arith.divsi %{{.+}}, %[[SAFE]] : i32
// CHECK: linalg.generic
// CHECK: %[[SAFE2:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : i32
// CHECK: %[[REM:.+]] = arith.remsi %{{.+}}, %[[SAFE2]] : i32
// CHECK: arith.xori
// CHECK: arith.addi %[[REM]]
func.func @integer_division(%a: tensor<8xi32>, %b: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %0 = kiln.div %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %1 = kiln.mod %a, %b {fmod = false} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0, %1 : tensor<8xi32>, tensor<8xi32>
}

// -----

// Float functions map to math ops; Softplus never overflows; comparisons
// are ordered (false on NaN); Sign keeps NaN.
// CHECK-LABEL: func.func @functions
// CHECK: math.atanh
// CHECK: math.roundeven
// CHECK: math.absf
// CHECK: math.exp
// CHECK: math.log1p
// CHECK: arith.maximumf
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf ole
func.func @functions(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi1>) {
  %0 = kiln.atanh %x : tensor<8xf32>
  %1 = kiln.round %0 : tensor<8xf32>
  %2 = kiln.softplus %1 : tensor<8xf32>
  %3 = kiln.sign %2 : tensor<8xf32>
  %4 = kiln.less_or_equal %3, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  return %1, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xi1>
}

// -----

// Unsigned integers become signless, and the ops whose meaning depends on
// the sign take their unsigned forms: division and remainder (by zero
// giving zero), maximum, comparison, widening and conversion to float, and
// maximum reduction from zero. The signature and constants go signless.
// CHECK-LABEL: func.func @unsigned
// CHECK-SAME: (%{{.+}}: tensor<4xi8>, %{{.+}}: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi1>, tensor<4xf32>, tensor<i8>)
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i8
// CHECK: arith.constant dense<[1, 2, -1, 0]> : tensor<4xi8>
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.maxui
// CHECK: arith.cmpi ugt
// CHECK: arith.uitofp
// CHECK: linalg.fill ins(%[[ZERO]] : i8)
// CHECK: arith.maxui
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<ui8>) {
  %c = kiln.constant dense<[1, 2, 255, 0]> : tensor<4xui8>
  %0 = kiln.div %a, %c : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kiln.mod %a, %b {fmod = false} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = kiln.max %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %3 = kiln.greater %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %4 = kiln.cast %a {to = f32} : tensor<4xui8> -> tensor<4xf32>
  %5 = kiln.reduce_max %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xui8>) -> tensor<ui8>
  return %0, %1, %2, %3, %4, %5 : tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<ui8>
}

// -----

// Shifts by the width or more give zero; an integer power runs in f64 and
// truncates toward zero.
// CHECK-LABEL: func.func @shifts_and_powers
// CHECK: arith.shli
// CHECK: arith.cmpi uge
// CHECK: arith.shrui
// CHECK: arith.sitofp {{.+}} to f64
// CHECK: math.powf
// CHECK: arith.fptosi {{.+}} to i32
func.func @shifts_and_powers(%a: tensor<4xui16>, %n: tensor<4xui16>, %x: tensor<4xi32>) -> (tensor<4xui16>, tensor<4xui16>, tensor<4xi32>) {
  %0 = kiln.bit_shift %a, %n {left = true} : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %1 = kiln.bit_shift %a, %n {left = false} : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %2 = kiln.pow %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1, %2 : tensor<4xui16>, tensor<4xui16>, tensor<4xi32>
}
