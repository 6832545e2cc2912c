//===- NVPTX.h - kernels to PTX for NVIDIA GPUs -----------------*- C++ -*-===//

#ifndef KILN_CODEGEN_NVPTX_NVPTX_H
#define KILN_CODEGEN_NVPTX_NVPTX_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace kiln {

/// Whether LLVM's NVPTX back end knows `chip` (sm_80, sm_90a, ...).
bool isKnownNVPTXChip(llvm::StringRef chip);

/// CUDA's libdevice (math functions as bitcode) from $CUDA_HOME, $CUDA_PATH
/// or /usr/local/cuda; empty when there is none.
std::string findLibdevice();

/// Appends the NVPTX lowering: attaches `chip`, lowers the kernel module to
/// NVVM and serializes it to PTX.
llvm::LogicalResult buildNVPTXPipeline(mlir::OpPassManager &pm,
                                       llvm::StringRef chip,
                                       llvm::raw_ostream &errors);

/// Fails with a clear message when `ptx` still calls libdevice functions,
/// which happens when libdevice was not found to link.
llvm::LogicalResult
checkLinked(llvm::StringRef ptx,
            llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace kiln

#endif // KILN_CODEGEN_NVPTX_NVPTX_H
