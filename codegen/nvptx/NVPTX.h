// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- NVPTX.h - kernels to PTX for NVIDIA GPUs -----------------*- C++ -*-===//

#ifndef KILN_CODEGEN_NVPTX_NVPTX_H
#define KILN_CODEGEN_NVPTX_NVPTX_H

#include "codegen/Target.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace kiln {

/// The NVIDIA target's family, as messages name it.
constexpr llvm::StringLiteral kNVPTXFamily = "NVIDIA (sm_*)";
/// What the NVIDIA target writes for --emit: ptx and kernels.
llvm::ArrayRef<EmitFormat> nvptxEmitFormats();
/// The NVIDIA target's own options: --ptxas.
llvm::ArrayRef<TargetOption> nvptxOptions();
/// The NVIDIA target for a --target entry naming an architecture LLVM
/// knows (sm_80, sm_90a, ...); null for any other entry.
llvm::Expected<std::unique_ptr<Target>> createNVPTXTarget(llvm::StringRef name,
                                                          llvm::StringRef hostCPU);

/// Whether LLVM's NVPTX back end knows `chip` (sm_80, sm_90a, ...).
bool isKnownNVPTXChip(llvm::StringRef chip);

/// The number of an NVIDIA architecture: 90 for sm_90 and sm_90a; 0 when
/// `chip` names none.
int nvidiaArchitecture(llvm::StringRef chip);

/// CUDA's libdevice (math functions as bitcode) from $CUDA_HOME, $CUDA_PATH
/// or /usr/local/cuda; empty when there is none.
std::string findLibdevice();

/// Appends the NVPTX lowering: attaches `chip`, lowers the kernel module to
/// NVVM and serializes it to PTX.
llvm::LogicalResult buildNVPTXPipeline(mlir::OpPassManager &pm, llvm::StringRef chip,
                                       llvm::raw_ostream &errors);

/// Fails with a clear message when `ptx` still calls libdevice functions,
/// which happens when libdevice was not found to link.
llvm::LogicalResult checkLinked(llvm::StringRef ptx,
                                llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// PTX assembled by ptxas for one architecture.
struct Cubin {
  std::string object;
  llvm::StringMap<KernelResources> kernels;
};

/// ptxas from $PATH, $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin;
/// empty when there is none.
std::string findPtxas();

/// Assembles `ptx` for `chip` with `ptxas` and reads what each kernel uses
/// from its report. A chip this ptxas does not know, or PTX it rejects, is
/// an error that quotes ptxas.
llvm::FailureOr<Cubin> assemblePTX(llvm::StringRef ptxas, llvm::StringRef ptx, llvm::StringRef chip,
                                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Reads `ptxas -v`'s report: registers, static shared memory and spills
/// per kernel.
llvm::StringMap<KernelResources> parsePtxasReport(llvm::StringRef report);

} // namespace kiln

#endif // KILN_CODEGEN_NVPTX_NVPTX_H
