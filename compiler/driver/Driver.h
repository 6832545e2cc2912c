// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Driver.h - one compilation, from an ONNX file to bytes ---*- C++ -*-===//
//
// What `kiln compile` and `kiln calibrate` run: the options are typed and
// filled by the caller, the result is the bytes to write (an artifact, IR
// or a target's code); errors go to the context's diagnostic handler.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_DRIVER_H
#define KILN_COMPILER_DRIVER_DRIVER_H

#include "compiler/driver/Pipeline.h"
#include "compiler/onnx/Importer.h"

#include <functional>

namespace kiln {

/// What a compilation can produce, by --emit's names: the driver's own
/// formats (the artifact, the graph stages' IR, a graph of the kernels),
/// then every target family's (codegen/Target.h's targetEmitFormats).
llvm::SmallVector<EmitFormat> emitFormats();

struct CompileOptions {
  ImportOptions import;
  /// --target entries ("host", "sm_90a", "gfx942"); empty, the host alone.
  std::vector<std::string> targets;
  /// The x86-64 CPU the host target is tuned for ("native": this machine's);
  /// empty, an artifact has a plan per level of portableHostCPUs() and
  /// other outputs take the last.
  std::string hostCPU;
  GraphOptions graph;
  CodegenOptions codegen;
  /// What to produce, one of emitFormats(): "artifact" (every target's code
  /// and plan), "kiln", "fused", "linalg", "dot", or a format a target
  /// writes ("ptx", "hsaco", "so", ...).
  std::string emit = "artifact";
  /// Print weights in full in IR instead of eliding them.
  bool printWeights = false;
  /// Report each phase's time (on stderr, when the compilation ends).
  bool timing = false;
  /// Told the phase a long compilation enters ("importing the model").
  std::function<void(llvm::StringRef)> progress;
  /// Runs on the imported module before anything else reads it (kiln
  /// calibrate exposes the products' activations as outputs).
  std::function<void(mlir::ModuleOp)> afterImport;
};

/// Compiles the ONNX model at `path` as `options` say and returns what it
/// emits. Targets and options are checked before the model is read.
llvm::FailureOr<std::string> compileModel(mlir::MLIRContext &context, llvm::StringRef path,
                                          const CompileOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_DRIVER_H
