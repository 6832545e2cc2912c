// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Pipeline.h - the passes a compilation runs, stage by stage -*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_PIPELINE_H
#define KILN_COMPILER_DRIVER_PIPELINE_H

#include "codegen/Target.h"

#include "mlir/IR/DialectRegistry.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Every dialect, extension and translation the compiler's pipelines use.
void registerCompilerDialects(mlir::DialectRegistry &registry);
/// Every pass the compiler's pipelines and kiln-opt name (upstream and
/// kiln's).
void registerCompilerPasses();

/// How the graph is optimized before code generation.
struct GraphOptions {
  /// The layout convolutions and pooling run in; unset, the target's.
  std::optional<Layout> layout;
  /// The format Conv, Gemm and MatMul read their operands in; unset, the
  /// target's.
  std::optional<Precision> precision;
  /// Operator types or parts of node names whose products stay fp32.
  std::vector<std::string> keepFp32;
  /// A kiln calibrate file, for fp8's activation scales.
  std::string calibration;
};

/// Appends graph optimization in the kiln dialect: fusions (with `fuse`),
/// folding, layout and precision assignment, with `target`'s defaults.
void populateGraphOptimization(mlir::OpPassManager &pm, const GraphOptions &options, bool fuse,
                               const Target &target);

/// Appends kernel generation: kiln ops to linalg on tensors, and with
/// `fuse` elementwise chains fused.
void populateKernelGeneration(mlir::OpPassManager &pm, bool fuse);

/// Runs the pipeline for `target` on the imported `module` up to `stop`
/// (Graph or later; Kernels only for GPU targets). Errors go to the
/// context's diagnostic handler.
llvm::LogicalResult runPipeline(mlir::ModuleOp module, const Target &target, Stage stop,
                                const GraphOptions &graph, const CodegenOptions &codegen,
                                mlir::TimingScope &timing);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_PIPELINE_H
