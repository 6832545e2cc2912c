// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Writer.h - the .kiln artifact ----------------------------*- C++ -*-===//

#ifndef KILN_COMPILER_ARTIFACT_WRITER_H
#define KILN_COMPILER_ARTIFACT_WRITER_H

#include "codegen/Target.h"

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

/// The record (runtime/format/PlanRecord.h) of the plan `planned` holds,
/// for code built for `target`: what the code embeds and the loader
/// compares with the manifest.
llvm::FailureOr<std::string> planRecord(llvm::StringRef target,
                                        llvm::ArrayRef<TensorSignature> inputs,
                                        llvm::ArrayRef<TensorSignature> outputs,
                                        mlir::ModuleOp planned);

/// One target's code and the plan it runs.
struct CompiledTarget : TargetCode {
  /// The module kiln-plan-memory and kiln-list-kernels (and on GPUs
  /// kiln-list-launches) annotated.
  mlir::ModuleOp planned;
};

/// Writes a .kiln artifact: the manifest, each target's code and the
/// weights of each target's plan (plans whose weights are the same bytes
/// share them). The same inputs give the same bytes.
llvm::FailureOr<std::string> writeArtifact(llvm::ArrayRef<TensorSignature> inputs,
                                           llvm::ArrayRef<TensorSignature> outputs,
                                           llvm::ArrayRef<CompiledTarget> targets);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_WRITER_H
