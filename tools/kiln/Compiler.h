// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Compiler.h - what kiln's compiling commands share --------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_COMPILER_H
#define KILN_TOOLS_KILN_COMPILER_H

#include "compiler/onnx/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace kiln {

/// Prints a compiler diagnostic as "kiln: error: [node 'N': ]message".
llvm::LogicalResult printDiagnostic(mlir::Diagnostic &diag);
/// Whether printDiagnostic has printed an error: some MLIR components
/// report an error and carry on, and kiln must still exit non-zero.
extern bool reportedError;

/// Reads "NAME=FILE.npy" (as given to --input-value) into `options`;
/// returns an error message, or an empty string on success.
llvm::Error parseInputValue(llvm::StringRef spec, ImportOptions &options);

/// An MLIR context with kiln's dialects and passes whose diagnostics go
/// to printDiagnostic.
class CompilerContext {
public:
  CompilerContext();
  mlir::MLIRContext &get() { return context; }

private:
  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace kiln

#endif // KILN_TOOLS_KILN_COMPILER_H
