//===- Writer.h - the .kiln artifact ----------------------------*- C++ -*-===//

#ifndef KILN_COMPILER_ARTIFACT_WRITER_H
#define KILN_COMPILER_ARTIFACT_WRITER_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln {

/// A model input or output as the manifest records it.
struct TensorSignature {
  std::string name;
  mlir::RankedTensorType type;
};

/// The names and types of @main's inputs and outputs, read from the module
/// the importer produced (before code generation changes the signature).
llvm::FailureOr<std::pair<std::vector<TensorSignature>, std::vector<TensorSignature>>>
readSignature(mlir::ModuleOp module);

/// Writes a .kiln artifact: the manifest, the host code and the weights that
/// kiln-plan-memory recorded on `planned`. The same inputs give the same bytes.
llvm::FailureOr<std::string>
writeArtifact(mlir::ModuleOp planned, llvm::ArrayRef<TensorSignature> inputs,
              llvm::ArrayRef<TensorSignature> outputs, llvm::StringRef hostCPU,
              llvm::StringRef hostCode);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_WRITER_H
