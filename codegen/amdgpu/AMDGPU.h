// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- AMDGPU.h - kernels to HSA code objects for AMD GPUs ------*- C++ -*-===//

#ifndef KILN_CODEGEN_AMDGPU_AMDGPU_H
#define KILN_CODEGEN_AMDGPU_AMDGPU_H

#include "codegen/Target.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace kiln {

/// The AMD target's family, as messages name it.
constexpr llvm::StringLiteral kAMDGPUFamily = "AMD (gfx*)";
/// What the AMD target writes for --emit: amdgcn, hsaco and kernels.
llvm::ArrayRef<EmitFormat> amdgpuEmitFormats();
/// The AMD target for a --target entry naming a chip LLVM knows (gfx90a,
/// gfx942, ...); null for any other entry.
llvm::Expected<std::unique_ptr<Target>> createAMDGPUTarget(llvm::StringRef name,
                                                           llvm::StringRef hostCPU);

/// Whether LLVM's AMDGPU back end knows `chip` (gfx90a, gfx942, ...).
bool isKnownAMDGPUChip(llvm::StringRef chip);

/// The folder holding amdgcn/bitcode/ocml.bc (the AMD device libraries):
/// $ROCM_PATH, /opt/rocm or Debian's /usr/lib/x86_64-linux-gnu; empty when
/// there is none.
std::string findDeviceLibraries();

/// Appends the AMDGPU lowering: attaches `chip`, lowers the kernel module to
/// ROCDL and serializes it to AMDGPU assembly.
llvm::LogicalResult buildAMDGPUPipeline(mlir::OpPassManager &pm, llvm::StringRef chip,
                                        llvm::raw_ostream &errors);

/// Assembles AMDGPU assembly for `chip` and links it with ld.lld into an HSA
/// code object (an AMDGPU ELF shared object).
llvm::FailureOr<std::string>
linkCodeObject(llvm::StringRef assembly, llvm::StringRef chip,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Adds to AMDGPU assembly the global the runtime reads
/// (hipModuleGetGlobal) and compares with the manifest: `record` and a NUL.
void appendPlanRecord(std::string &assembly, llvm::StringRef record);

/// What each kernel of an HSA code object uses, from its metadata note
/// (NT_AMDGPU_METADATA): VGPRs, SGPRs, LDS and scratch bytes.
llvm::FailureOr<llvm::StringMap<KernelResources>>
readKernelResources(llvm::StringRef codeObject,
                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace kiln

#endif // KILN_CODEGEN_AMDGPU_AMDGPU_H
