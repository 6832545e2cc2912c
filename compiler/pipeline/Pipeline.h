//===- Pipeline.h - what `kiln compile` runs, per target --------*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINE_PIPELINE_H
#define KILN_COMPILER_PIPELINE_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/Timing.h"

#include <string>
#include <vector>

namespace kiln {

/// A processor that kiln generates code for.
struct Target {
  enum class Kind { Host, NVPTX, AMDGPU };
  Kind kind;
  std::string chip; ///< as LLVM names it: x86-64-v3, sm_90, sm_90a, gfx942, ...

  bool isHost() const { return kind == Kind::Host; }
  bool isNVPTX() const { return kind == Kind::NVPTX; }
  bool isAMDGPU() const { return kind == Kind::AMDGPU; }
};

/// Parses a comma-separated --target list ("host,sm_90,gfx942"); `host`
/// means the x86-64 CPU `hostCPU`. On failure sets `error` to a message
/// naming the bad entry and the accepted forms.
llvm::FailureOr<llvm::SmallVector<Target>> parseTargets(llvm::StringRef list,
                                                        llvm::StringRef hostCPU,
                                                        std::string &error);

/// Every dialect, extension and translation the compiler's pipelines use.
void registerCompilerDialects(mlir::DialectRegistry &registry);
/// Every pass the compiler's textual pipelines name (upstream and kiln's).
void registerCompilerPasses();

/// What a pipeline stops after.
enum class Stage {
  Graph,   ///< kiln ops after graph optimization
  Linalg,  ///< kiln ops lowered to linalg on tensors
  Kernels, ///< GPU: bufferized, mapped and outlined into gpu.module @kernels
  Object,  ///< GPU: lowered and serialized (gpu.binary); host: LLVM dialect
           ///< with the entry point
};

/// How the graph is optimized before code generation.
struct GraphOptions {
  /// Run the fusion passes (batch norms into convolutions, decomposed
  /// layer norms and GELUs made whole, elementwise chains, and on the host
  /// the kernels around each product); off, the graph is only folded.
  bool fuse = true;
  /// The layout convolutions and pooling run in: nchw or nhwc; empty, the
  /// target's default: nhwc on GPUs, nchw on the host.
  std::string layout;
  /// The format Conv, Gemm and MatMul read their operands in (fp32, tf32,
  /// fp16, bf16 or fp8); empty, the target's default: tf32 on GPUs, fp32 on
  /// the host.
  std::string precision;
  /// Operator types or parts of node names whose products stay fp32.
  std::vector<std::string> keepFp32;
  /// A kiln calibrate file, for fp8's activation scales.
  std::string calibration;
};

/// Runs the pipeline for `target` on `module` up to `stage`. Errors go to
/// the context's diagnostic handler.
llvm::LogicalResult runPipeline(mlir::ModuleOp module, const Target &target,
                                Stage stage, mlir::TimingScope &timing,
                                const GraphOptions &graph = {});

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_PIPELINE_H
