// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Host.h - kernels to x86-64 code for the host CPU ---------*- C++ -*-===//
//
// The host target lowers a planned module (see kiln-plan-memory) to LLVM,
// adds the entry point the runtime calls, and compiles it into a shared
// object:
//
//   void kiln_entry(void **buffers);
//
// `buffers` holds, in order, one pointer per input, one per output, the
// activation arena (kiln.arena_bytes, 64-byte aligned) and the weights
// (kiln.weights_bytes, 64-byte aligned).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOST_HOST_H
#define KILN_CODEGEN_HOST_HOST_H

#include "codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <string>
#include <vector>

namespace kiln {

/// The host target's family, as messages name it.
constexpr llvm::StringLiteral kHostFamily = "host";
/// What the host target writes for --emit: llvm, obj and so.
llvm::ArrayRef<EmitFormat> hostEmitFormats();
/// The host target for the --target entry `host`, tuned for `cpu`; null
/// for any other entry, and an error when LLVM knows no such CPU.
llvm::Expected<std::unique_ptr<Target>> createHostTarget(llvm::StringRef name, llvm::StringRef cpu);

/// The symbol the runtime calls.
constexpr llvm::StringLiteral kHostEntryPoint = "kiln_entry";

/// Whether LLVM knows the x86-64 CPU `cpu` ("native" is the build machine's).
bool isKnownHostCPU(llvm::StringRef cpu);

/// The x86-64 micro-architecture level (x86-64, x86-64-v2, -v3 or -v4) that
/// code for `cpu` needs: what the runtime checks before loading it.
std::string hostLevel(llvm::StringRef cpu);

/// Appends, for a module of linalg on tensors (the kernel generators'
/// output), bufferization, vectorization for `cpu`'s vector registers (with
/// the kernels around each product joined to it when `fuse`), memory
/// planning and lowering to the LLVM dialect.
llvm::LogicalResult buildHostPipeline(mlir::OpPassManager &pm, llvm::StringRef cpu, bool fuse,
                                      llvm::raw_ostream &errors);

/// Adds kiln_entry to a module lowered by the host pipeline, and defines the
/// task dispatches that hand parallel work to the runtime's threads.
llvm::LogicalResult addHostEntryPoint(mlir::ModuleOp module);

/// Compiles the lowered module for `cpu`'s micro-architecture level (see
/// hostLevel) into relocatable objects, one per part of it (see
/// splitHostModule), at most `parts`, which LLVM optimizes and compiles side
/// by side on the context's threads; times the phases under `timing`. With
/// `llvmIR`, compiles the module whole and writes the optimized LLVM IR
/// there too.
llvm::FailureOr<std::vector<std::string>> compileHostObjects(mlir::ModuleOp module,
                                                             llvm::StringRef cpu, unsigned parts,
                                                             mlir::TimingScope &timing,
                                                             std::string *llvmIR = nullptr);

/// Links host objects into the shared object the runtime loads.
llvm::FailureOr<std::string> linkHostCode(mlir::ModuleOp module,
                                          llvm::ArrayRef<std::string> objects);

} // namespace kiln

#endif // KILN_CODEGEN_HOST_HOST_H
