// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Writer.h - the .kiln artifact ----------------------------*- C++ -*-===//

#ifndef KILN_COMPILER_ARTIFACT_WRITER_H
#define KILN_COMPILER_ARTIFACT_WRITER_H

#include "codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln {

/// A model input or output as the manifest records it: for a symbolic
/// one, each dimension as a program of the symbols
/// (runtime/format/DimProgram.h; a static dimension's is its size).
struct TensorSignature {
  std::string name;
  mlir::RankedTensorType type;
  std::vector<std::vector<int64_t>> dims;
};

/// A size the model takes at run time, as the manifest records it.
struct SymbolSignature {
  std::string name;
  int64_t min, max, opt;
};

/// What the model takes and returns.
struct Signature {
  std::vector<TensorSignature> inputs, outputs;
  std::vector<SymbolSignature> symbols;
};

/// @main's inputs and outputs and the module's symbols, read from the
/// module the importer produced (before code generation changes the
/// signature). Fails on a symbol that no input has as a dimension of its
/// own, whose value a run could not be given.
llvm::FailureOr<Signature> readSignature(mlir::ModuleOp module);

/// The record (runtime/format/PlanRecord.h) of the plan `planned` holds,
/// for code built for `target`: what the code embeds and the loader
/// compares with the manifest.
llvm::FailureOr<std::string> planRecord(llvm::StringRef target, const Signature &signature,
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
llvm::FailureOr<std::string> writeArtifact(const Signature &signature,
                                           llvm::ArrayRef<CompiledTarget> targets);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_WRITER_H
