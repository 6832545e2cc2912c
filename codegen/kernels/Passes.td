// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.td - kernel generation's pass ---------------*- tablegen -*-===//

#ifndef KILN_CODEGEN_KERNELS_PASSES_TD
#define KILN_CODEGEN_KERNELS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToLinalg : Pass<"kiln-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Turns kiln ops into linalg on tensors with the kernel generators";
  let description = [{
    Applies codegen/kernels' generators to every kiln op. An op that no
    generator handles is reported at its location (its ONNX node) and the
    pass fails: nothing is silently left behind.

    A module with symbols (`kiln.symbols`) gives `@main` one `index`
    argument per symbol after its tensors (`{kiln.symbol = NAME}`); each
    kernel's symbolic sizes are computed from them, and the `#kiln.dims`
    encodings are dropped at the end. Ops whose generator takes static
    shapes only are reported first, each at its node.

    ```mlir
    %y = kiln.relu %x : tensor<1x4x6x6xf32>
    // becomes
    %e = tensor.empty() : tensor<1x4x6x6xf32>
    %y = linalg.generic {...} ins(%x : ...) outs(%e : ...) { arith.maximumf ... }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

#endif // KILN_CODEGEN_KERNELS_PASSES_TD
