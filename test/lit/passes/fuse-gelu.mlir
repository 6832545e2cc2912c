// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-gelu))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-gelu))' --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// PyTorch's form, (x * (erf(x / sqrt 2) + 1)) * 0.5: five nodes become one.
// CHECK-LABEL: func.func @pytorch
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.gelu %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
// LOC-LABEL: func.func @pytorch
// LOC: kiln.gelu {{.+}} loc(#[[FUSED:.+]])
// LOC: #[[FUSED]] = loc(fused[#{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}])
func.func @pytorch(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %a = kiln.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("div")
  %b = kiln.erf %a : tensor<2x8xf32> loc("erf")
  %c = kiln.add %b, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("add")
  %d = kiln.mul %x, %c : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("mul")
  %y = kiln.mul %d, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("mul2")
  return %y : tensor<2x8xf32>
}

// -----

// The other groupings, and x * 1/sqrt(2) for the division.
// CHECK-LABEL: func.func @groupings
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y1:.+]] = kiln.gelu %[[X]]
// CHECK-NEXT: %[[Y2:.+]] = kiln.gelu %[[X]]
// CHECK-NEXT: return %[[Y1]], %[[Y2]]
func.func @groupings(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %rsqrt2 = kiln.constant dense<0.707106769> : tensor<1xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  // (x * 0.5) * c
  %a = kiln.mul %rsqrt2, %x : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
  %b = kiln.erf %a : tensor<8xf32>
  %c = kiln.add %one, %b : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %h = kiln.mul %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y1 = kiln.mul %h, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  // (c * 0.5) * x
  %a2 = kiln.mul %x, %rsqrt2 : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
  %b2 = kiln.erf %a2 : tensor<8xf32>
  %c2 = kiln.add %b2, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %h2 = kiln.mul %c2, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y2 = kiln.mul %x, %h2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y1, %y2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Left alone: an erf used outside the chain, and a chain whose constants
// are not GELU's (x / 2 inside the erf).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.gelu
// CHECK: return
func.func @left_alone(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %a = kiln.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %b = kiln.erf %a : tensor<8xf32>
  %c = kiln.add %b, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %d = kiln.mul %x, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = kiln.mul %d, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %a2 = kiln.div %x, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %b2 = kiln.erf %a2 : tensor<8xf32>
  %c2 = kiln.add %b2, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %d2 = kiln.mul %x, %c2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y2 = kiln.mul %d2, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %y, %b, %y2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
