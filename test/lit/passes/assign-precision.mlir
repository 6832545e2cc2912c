// RUN: kiln-opt %s --kiln-assign-precision=precision=bf16 | FileCheck %s
// RUN: kiln-opt %s --kiln-assign-precision="precision=bf16 keep-fp32=Gemm,/attention/" | FileCheck %s --check-prefix=KEEP
// RUN: kiln-opt %s --kiln-assign-precision=precision=fp32 | FileCheck %s --check-prefix=FP32

// Below fp32, a product's constant operand is replaced by a rounded copy
// (the original stays for its other user), its activations are rounded by
// kiln.round_to, and the product says which format it reads. The bias, the
// softmax and the other ops stay f32.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[Y:.+]]: tensor<3x2xf32>)
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 3.000000e-01], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]>
// CHECK-DAG: %[[BIAS:.+]] = kiln.constant dense<1.00000095> : tensor<2xf32>
// CHECK-DAG: %[[WR:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 0.30078125], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]>
// CHECK-DAG: %[[XR:.+]] = kiln.round_to %[[X]] {format = "bf16", scale = 1.000000e+00 : f32} : tensor<2x3xf32>
// CHECK: kiln.gemm %[[XR]], %[[WR]], %[[BIAS]] {{.+}}kiln.precision = "bf16"
// CHECK: %[[P:.+]] = kiln.softmax
// CHECK: %[[L:.+]] = kiln.round_to %[[P]]
// CHECK: %[[R:.+]] = kiln.round_to %[[P]]
// CHECK: kiln.matmul %[[L]], %[[R]] {kiln.precision = "bf16"}
// CHECK: kiln.add %[[Y]], %[[W]]
// KEEP-NOT: kiln.precision
// KEEP-NOT: kiln.round_to
// FP32-NOT: kiln.precision
// FP32-NOT: kiln.round_to
func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<3x2xf32>) {
  %w = kiln.constant dense<[[1.0, 0.3], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %bias = kiln.constant dense<1.000001> : tensor<2xf32>
  %0 = kiln.gemm %x, %w, %bias {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = false}
      : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<2x2xf32> loc("/dense/Gemm")
  %1 = kiln.softmax %0 {axis = 1 : i64} : tensor<2x2xf32> loc("/Softmax")
  %2 = kiln.matmul %1, %1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/attention/MatMul")
  %3 = kiln.add %y, %w : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32> loc("/Add")
  return %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<3x2xf32>
}
