// RUN: kiln-opt %s --kiln-lower-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

// Symbolic shapes: @main takes each symbol's value after its tensors, the
// kernels' tensors are sized from them, and no type keeps a #kiln.dims
// (the inputs and outputs keep theirs as attributes).
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?x8xf32> {kiln.dims = #kiln.dims<()[s0, s1] -> (s0, s1, 8)>},
// CHECK-SAME: %[[B:[^:]+]]: index {kiln.symbol = "batch"}, %[[S:[^:]+]]: index {kiln.symbol = "seq"})
// CHECK-SAME: -> (tensor<?x?x4xf32> {kiln.dims = #kiln.dims<()[s0, s1] -> (s0, s1, 4)>}, tensor<?x4xf32> {kiln.dims = #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>}, tensor<?x1xf32> {kiln.dims = #kiln.dims<()[s0] -> (s0, 1)>}, tensor<2xi64>)
// CHECK-NOT: {{[0-9a-z?], #kiln.dims}}
// The shape as a tensor: batch and seq * 4.
// CHECK: tensor.from_elements {{.*}} : tensor<2xi64>
// The product's result, filled with zeros: batch x seq x 4.
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x?x4xf32>
// CHECK: linalg.fill {{.*}} outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]], %{{.+}} : tensor<?x?x8xf32>, tensor<8x4xf32>)
// The bias broadcast over rows.
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<?x?x4xf32>)
// Softmax's row statistics loop to the row's size.
// CHECK: tensor.dim
// CHECK: scf.for
// Flattening batch and seq: batch * seq rows.
// CHECK: %[[ROWS:.+]] = arith.muli %[[B]], %[[S]]
// CHECK: tensor.expand_shape {{.*}} output_shape [%[[ROWS]], 4] : tensor<?xf32> into tensor<?x4xf32>
// The mean over seq divides by it.
// CHECK: arith.index_cast %[[S]]
// CHECK: arith.sitofp
module attributes {kiln.symbols = [#kiln.symbol<"batch", 1, 8, 1>, #kiln.symbol<"seq", 1, 128, 1>]} {
func.func @main(%x: tensor<?x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 8)>>)
    -> (tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>,
        tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>>,
        tensor<?x1xf32, #kiln.dims<()[s0] -> (s0, 1)>>,
        tensor<2xi64>) {
  %w = kiln.constant dense<0.5> : tensor<8x4xf32>
  %bias = kiln.constant dense<0.25> : tensor<4xf32>
  %p = kiln.matmul %x, %w : (tensor<?x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 8)>>, tensor<8x4xf32>) -> tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>
  %a = kiln.add %p, %bias : (tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>, tensor<4xf32>) -> tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>
  %t = kiln.transpose %a {perm = array<i64: 0, 2, 1>} : (tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>) -> tensor<?x4x?xf32, #kiln.dims<()[s0, s1] -> (s0, 4, s1)>>
  %sm = kiln.softmax %t {axis = 2 : i64} : tensor<?x4x?xf32, #kiln.dims<()[s0, s1] -> (s0, 4, s1)>>
  %back = kiln.transpose %sm {perm = array<i64: 0, 2, 1>} : (tensor<?x4x?xf32, #kiln.dims<()[s0, s1] -> (s0, 4, s1)>>) -> tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>
  %flat = kiln.reshape %back {shape = array<i64: -9223372036854775808, 4>, dims = #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>} : (tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>) -> tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>>
  %last = kiln.slice %x {starts = array<i64: 0, -9223372036854775808, 0>, ends = array<i64: -9223372036854775808, -9223372036854775808, 1>, steps = array<i64: 1, 1, 1>, bounds = #kiln.dims<()[s0, s1] -> (0, 0, 0, s0, s1, 1)>} : (tensor<?x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 8)>>) -> tensor<?x?x1xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 1)>>
  %mean = kiln.reduce_mean %last {axes = array<i64: 1>, keepdims = false} : (tensor<?x?x1xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 1)>>) -> tensor<?x1xf32, #kiln.dims<()[s0] -> (s0, 1)>>
  %shape = kiln.dims(<()[s0, s1] -> (s0, s1 * 4)>) : tensor<2xi64>
  return %a, %flat, %mean, %shape : tensor<?x?x4xf32, #kiln.dims<()[s0, s1] -> (s0, s1, 4)>>, tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 * s1, 4)>>, tensor<?x1xf32, #kiln.dims<()[s0] -> (s0, 1)>>, tensor<2xi64>
}
}

// -----

// Concatenating along a symbolic dimension: the second input goes at the
// first's size, which is its symbol's value.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[PAST:[^:]+]]: tensor<?x4xf32> {{{[^}]+}}}, %[[NEW:[^:]+]]: tensor<?x4xf32> {{{[^}]+}}}, %[[P:[^:]+]]: index {kiln.symbol = "past"}, %[[S:[^:]+]]: index {kiln.symbol = "seq"})
// CHECK: %[[TOTAL:.+]] = arith.addi %[[P]], %[[S]]
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[TOTAL]]) : tensor<?x4xf32>
// CHECK: %[[FIRST:.+]] = tensor.insert_slice %[[PAST]] into %[[EMPTY]][%{{.+}}, 0] [%[[P]], 4]
// CHECK: tensor.insert_slice %[[NEW]] into %[[FIRST]][%[[P]], 0] [%[[S]], 4]
module attributes {kiln.symbols = [#kiln.symbol<"past", 1, 64, 1>, #kiln.symbol<"seq", 1, 64, 1>]} {
func.func @main(%past: tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0, 4)>>,
                %new: tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s1, 4)>>)
    -> tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 + s1, 4)>> {
  %c = kiln.concat %past, %new {axis = 0 : i64} : (tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0, 4)>>, tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s1, 4)>>) -> tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 + s1, 4)>>
  return %c : tensor<?x4xf32, #kiln.dims<()[s0, s1] -> (s0 + s1, 4)>>
}
}

// -----

// Splitting a static axis of a symbolic tensor; gathering along a symbolic
// one, its index clamped to the run's size.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x6xf32> {{{[^}]+}}}, %{{[^:]+}}: tensor<i64>, %[[S:[^:]+]]: index {kiln.symbol = "seq"})
// CHECK-DAG: tensor.extract_slice %[[X]][0, 0] [%[[S]], 2] [1, 1] : tensor<?x6xf32> to tensor<?x2xf32>
// CHECK-DAG: tensor.extract_slice %[[X]][0, 2] [%[[S]], 4] [1, 1] : tensor<?x6xf32> to tensor<?x4xf32>
// CHECK: linalg.generic
// CHECK: %[[LAST:.+]] = arith.subi %[[S]], %{{.+}} : index
// CHECK: arith.minsi %{{.+}}, %[[LAST]] : index
module attributes {kiln.symbols = [#kiln.symbol<"seq", 1, 64, 1>]} {
func.func @main(%x: tensor<?x6xf32, #kiln.dims<()[s0] -> (s0, 6)>>, %i: tensor<i64>)
    -> (tensor<?x2xf32, #kiln.dims<()[s0] -> (s0, 2)>>, tensor<?x4xf32, #kiln.dims<()[s0] -> (s0, 4)>>, tensor<6xf32>) {
  %a:2 = kiln.split %x {axis = 1 : i64, sizes = array<i64: 2, 4>} : (tensor<?x6xf32, #kiln.dims<()[s0] -> (s0, 6)>>) -> (tensor<?x2xf32, #kiln.dims<()[s0] -> (s0, 2)>>, tensor<?x4xf32, #kiln.dims<()[s0] -> (s0, 4)>>)
  %g = kiln.gather %x, %i {axis = 0 : i64} : (tensor<?x6xf32, #kiln.dims<()[s0] -> (s0, 6)>>, tensor<i64>) -> tensor<6xf32>
  return %a#0, %a#1, %g : tensor<?x2xf32, #kiln.dims<()[s0] -> (s0, 2)>>, tensor<?x4xf32, #kiln.dims<()[s0] -> (s0, 4)>>, tensor<6xf32>
}
}

// -----

// A convolution and pooling over a symbolic batch of static images: the
// im2col columns and the product's rows take the batch.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x3x8x8xf32> {{{[^}]+}}}, %[[N:[^:]+]]: index {kiln.symbol = "batch"})
// CHECK: tensor.empty(%[[N]]) : tensor<?x1x3x3x3x8x8xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [%[[N]], 1, 27, 64] : tensor<?xf32> into tensor<?x1x27x64xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x4x27xf32>, tensor<?x1x27x64xf32>)
// CHECK: tensor.empty(%[[N]]) : tensor<?x4x4x4xf32>
module attributes {kiln.symbols = [#kiln.symbol<"batch", 1, 8, 1>]} {
func.func @main(%x: tensor<?x3x8x8xf32, #kiln.dims<()[s0] -> (s0, 3, 8, 8)>>) -> tensor<?x4x4x4xf32, #kiln.dims<()[s0] -> (s0, 4, 4, 4)>> {
  %w = kiln.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x8x8xf32, #kiln.dims<()[s0] -> (s0, 3, 8, 8)>>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32, #kiln.dims<()[s0] -> (s0, 4, 8, 8)>>
  %p = kiln.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : (tensor<?x4x8x8xf32, #kiln.dims<()[s0] -> (s0, 4, 8, 8)>>) -> tensor<?x4x4x4xf32, #kiln.dims<()[s0] -> (s0, 4, 4, 4)>>
  return %p : tensor<?x4x4x4xf32, #kiln.dims<()[s0] -> (s0, 4, 4, 4)>>
}
}

// -----

// Windows over an image a run gives: the convolution's gather and the
// pooling check the rows they read against the image's height (the
// symbol's value); the global mean divides by the run's positions.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x3x?x8xf32>
// CHECK-SAME: %[[N:[^:]+]]: index {kiln.symbol = "batch"}, %[[H:[^:]+]]: index {kiln.symbol = "side"})
// CHECK: tensor.empty(%[[N]], %[[H]]) : tensor<?x1x3x3x3x?x8xf32>
// CHECK: arith.cmpi slt, %{{.+}}, %[[H]] : index
// CHECK: tensor.extract %[[X]]
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x4x27xf32>, tensor<?x1x27x?xf32>)
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.+}}, %[[H]] : index
// CHECK: arith.maximumf
// CHECK: %[[POSITIONS:.+]] = arith.muli %[[H]], %c8
// CHECK: %[[INDEX:.+]] = arith.index_cast %[[POSITIONS]]
// CHECK: %[[COUNT:.+]] = arith.sitofp %[[INDEX]]
// CHECK: arith.divf %{{.+}}, %[[COUNT]] : f32
module attributes {kiln.symbols = [#kiln.symbol<"batch", 1, 8, 1>, #kiln.symbol<"side", 4, 16, 8>]} {
func.func @main(%x: tensor<?x3x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 3, s1, 8)>>) -> tensor<?x4x1x1xf32, #kiln.dims<()[s0] -> (s0, 4, 1, 1)>> {
  %w = kiln.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 3, s1, 8)>>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 4, s1, 8)>>
  %p = kiln.max_pool %c {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : (tensor<?x4x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 4, s1, 8)>>) -> tensor<?x4x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 4, s1, 8)>>
  %g = kiln.global_average_pool %p : (tensor<?x4x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 4, s1, 8)>>) -> tensor<?x4x1x1xf32, #kiln.dims<()[s0] -> (s0, 4, 1, 1)>>
  return %g : tensor<?x4x1x1xf32, #kiln.dims<()[s0] -> (s0, 4, 1, 1)>>
}
}

// -----

// Generators that take static shapes only say so, for every such op.
module attributes {kiln.symbols = [#kiln.symbol<"batch", 1, 8, 1>, #kiln.symbol<"side", 4, 16, 8>]} {
func.func @main(%x: tensor<?x3x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 3, s1, 8)>>, %i: tensor<2x3x2x8xi64>) {
  // expected-error @+1 {{kiln cannot generate this 'kiln.arg_max' for symbolic shapes yet: its kernel generator takes static shapes only}}
  %a = kiln.arg_max %x {axis = 1 : i64, keepdims = true, select_last_index = false} : (tensor<?x3x?x8xf32, #kiln.dims<()[s0, s1] -> (s0, 3, s1, 8)>>) -> tensor<?x1x?x8xi64, #kiln.dims<()[s0, s1] -> (s0, 1, s1, 8)>>
  return
}
}
