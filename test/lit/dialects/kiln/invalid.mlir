// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @add_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operand shapes 'tensor<2x3xf32>' and 'tensor<4xf32>' do not broadcast}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @add_mixed_elements(%a: tensor<2xf32>, %b: tensor<2xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operand element types differ: 'f32' vs 'i64'}}
  %0 = kiln.add %a, %b : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @wrong_result_type(%a: tensor<2xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  %0 = "kiln.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{must be tensor of static or symbolic shape}}
  %0 = kiln.relu %a : tensor<?xf32>
  return
}

// -----

func.func @channels_last_groups(%x: tensor<1x4x4x4xf32>, %w: tensor<1x1x2x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{channels_last convolutions have one group}}
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x4x4x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @round_to_format(%a: tensor<2xf32>) {
  // expected-error @+1 {{format must be tf32, fp16, bf16, fp8 or fp8-fnuz, not 'fp4'}}
  %0 = kiln.round_to %a {format = "fp4", scale = 1.0 : f32} : tensor<2xf32>
  return
}

// -----

func.func @round_to_scale(%a: tensor<2xf32>) {
  // expected-error @+1 {{scale must be positive and finite, not 0}}
  %0 = kiln.round_to %a {format = "fp8", scale = 0.0 : f32} : tensor<2xf32>
  return
}

// -----

func.func @round_to_f16(%a: tensor<2xf16>) {
  // expected-error @+1 {{rounds f32 tensors only}}
  %0 = kiln.round_to %a {format = "bf16", scale = 1.0 : f32} : tensor<2xf16>
  return
}

// -----

func.func @clip_bounds(%a: tensor<2xf32>) {
  // expected-error @+1 {{min 6.000000e+00 exceeds max 0.000000e+00}}
  %0 = kiln.clip %a {min = 6.0 : f64, max = 0.0 : f64} : tensor<2xf32>
  return
}

// -----

func.func @conv_group(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{group 4 must divide input channels 6 and filters 4}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_kernel_too_big(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{kernel does not fit spatial dimension 0 (size 2)}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{bias must have shape [4], got 'tensor<5xf32>'}}
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @gemm_inner(%a: tensor<2x5xf32>, %b: tensor<7x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inner dimensions differ: 5 vs 4}}
  %0 = kiln.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = true}
      : (tensor<2x5xf32>, tensor<7x4xf32>) -> tensor<2x7xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<3x4x5xf32>, %b: tensor<2x5x6xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{batch dimensions of 'tensor<3x4x5xf32>' and 'tensor<2x5x6xf32>' do not broadcast}}
  %0 = kiln.matmul %a, %b : (tensor<3x4x5xf32>, tensor<2x5x6xf32>) -> tensor<3x4x6xf32>
  return
}

// -----

func.func @batch_norm_params(%x: tensor<1x4x2x2xf32>, %s: tensor<3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{parameters must have shape [4], got 'tensor<3xf32>'}}
  %0 = kiln.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-5 : f32}
      : (tensor<1x4x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for 'tensor<2x8xf32>'}}
  %0 = kiln.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-12 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{axis 5 is out of range for 'tensor<2x8xf32>'}}
  %0 = kiln.softmax %x {axis = 5 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x4x9x9xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{pads must be smaller than the kernel}}
  %0 = kiln.max_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>,
                         kernel_shape = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>}
      : (tensor<1x4x9x9xf32>) -> tensor<1x4x12x12xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axes must be sorted, unique and in [0, 2)}}
  %0 = kiln.reduce_sum %x {axes = array<i64: 1, 0>, keepdims = false} : (tensor<2x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{cannot reshape 6 elements into 8}}
  %0 = kiln.reshape %x {shape = array<i64: 2, 4>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{perm is not a permutation of [0, 2)}}
  %0 = kiln.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inputs differ in dimension 1}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @split_sizes(%x: tensor<2x6xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{split sizes add up to 5, not to dimension 1 of size 6}}
  %0:2 = kiln.split %x {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  return
}

// -----

func.func @slice_bounds(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dimension 0: start 0, end 9, step 1 are not normalized for size 4}}
  %0 = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 9>, steps = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_indices(%x: tensor<4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be tensor of static or symbolic shape with at most 2^63 - 1 elements of 32-bit signless integer or 64-bit signless integer values}}
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<4xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @expand_shape(%x: tensor<3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'tensor<3xf32>' does not broadcast to shape [4]}}
  %0 = kiln.expand %x {shape = array<i64: 4>} : (tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @pad_negative(%x: tensor<2xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dimension 0 padded to a negative size}}
  %0 = kiln.pad %x {mode = #kiln.pad_mode<constant>, pads = array<i64: -2, -1>, value = 0.0 : f64} : (tensor<2xf32>) -> tensor<0xf32>
  return
}

// -----

// Shapes come from untrusted models: a tensor whose element count overflows
// int64_t is rejected wherever it appears.
func.func @element_count_overflow(%a: tensor<4294967296x4294967296xf32>) {
  // expected-error @+1 {{operand #0 must be tensor of static or symbolic shape with at most 2^63 - 1 elements}}
  %0 = kiln.relu %a : tensor<4294967296x4294967296xf32>
  return
}

// -----

func.func @slice_step_overflow(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dimension 0: step -9223372036854775808 is out of range}}
  %0 = kiln.slice %x {starts = array<i64: 3>, ends = array<i64: -1>, steps = array<i64: -9223372036854775808>} : (tensor<4xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @conv_mixed_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{input, weight and bias element types differ}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @tensor_map_rank(%a: memref<2x2x2x2x2x2xf32>) {
  // expected-error @+1 {{'kiln.tensor_map' op has 6 dimensions; a tensor map has 1 to 5}}
  %0 = kiln.tensor_map %a {box = array<i64: 1, 1, 1, 1, 1, 1>, dims = array<i64: 2, 2, 2, 2, 2, 2>, strides = array<i64: 4, 8, 16, 32, 64>, swizzle = 0 : i64} : memref<2x2x2x2x2x2xf32>
  return
}

// -----

func.func @tensor_map_stride(%a: memref<33x70xf32>) {
  // expected-error @+1 {{'kiln.tensor_map' op has a stride of 70 elements; strides are multiples of 16 bytes below 2^40}}
  %0 = kiln.tensor_map %a {box = array<i64: 32, 64>, dims = array<i64: 70, 33>, strides = array<i64: 70>, swizzle = 128 : i64} : memref<33x70xf32>
  return
}

// -----

func.func @tensor_map_box(%a: memref<33x40xf32>) {
  // expected-error @+1 {{'kiln.tensor_map' op has a box row of 256 bytes; rows are multiples of 16 bytes, at most the swizzle span}}
  %0 = kiln.tensor_map %a {box = array<i64: 64, 64>, dims = array<i64: 40, 33>, strides = array<i64: 40>, swizzle = 128 : i64} : memref<33x40xf32>
  return
}

// -----

func.func @tensor_map_element(%a: memref<33x40xf16>) {
  // expected-error @+1 {{'kiln.tensor_map' op maps f32 buffers only}}
  %0 = kiln.tensor_map %a {box = array<i64: 32, 64>, dims = array<i64: 40, 33>, strides = array<i64: 40>, swizzle = 128 : i64} : memref<33x40xf16>
  return
}

// -----

func.func @symbolic_size_disagrees(%a: tensor<?x4xf32, #kiln.dims<()[s0] -> (s0, 5)>>) {
  // expected-error @+1 {{must be tensor of static or symbolic shape}}
  %0 = kiln.relu %a : tensor<?x4xf32, #kiln.dims<()[s0] -> (s0, 5)>>
  return
}

// -----

func.func @symbolic_without_symbols(%a: tensor<?x4xf32, #kiln.dims<() -> (3, 4)>>) {
  // expected-error @+1 {{must be tensor of static or symbolic shape}}
  %0 = kiln.relu %a : tensor<?x4xf32, #kiln.dims<() -> (3, 4)>>
  return
}

// -----

// Two different symbols may differ at run time: no broadcast between them.
func.func @different_symbols(%a: tensor<?xf32, #kiln.dims<()[s0, s1] -> (s0)>>,
                             %b: tensor<?xf32, #kiln.dims<()[s0, s1] -> (s1)>>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{do not broadcast}}
  %0 = kiln.add %a, %b : (tensor<?xf32, #kiln.dims<()[s0, s1] -> (s0)>>, tensor<?xf32, #kiln.dims<()[s0, s1] -> (s1)>>) -> tensor<?xf32, #kiln.dims<()[s0, s1] -> (s0)>>
  return
}

// -----

func.func @reshape_loses_elements(%a: tensor<?x4xf32, #kiln.dims<()[s0] -> (s0, 4)>>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{cannot reshape}}
  %0 = kiln.reshape %a {shape = array<i64: -9223372036854775808, 2>, dims = #kiln.dims<()[s0] -> (s0, 2)>} : (tensor<?x4xf32, #kiln.dims<()[s0] -> (s0, 4)>>) -> tensor<?x2xf32, #kiln.dims<()[s0] -> (s0, 2)>>
  return
}

// -----

func.func @symbolic_split(%a: tensor<?xf32, #kiln.dims<()[s0] -> (s0)>>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{cannot split symbolic dimension 0}}
  %0:2 = kiln.split %a {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<?xf32, #kiln.dims<()[s0] -> (s0)>>) -> (tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @symbolic_gather_elements(%a: tensor<?xf32, #kiln.dims<()[s0] -> (s0)>>, %i: tensor<2xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{kiln.gather_elements does not take symbolic shapes yet}}
  %0 = kiln.gather_elements %a, %i {axis = 0 : i64} : (tensor<?xf32, #kiln.dims<()[s0] -> (s0)>>, tensor<2xi64>) -> tensor<2xf32>
  return
}
