//===- NVPTX.h - kernels to PTX for NVIDIA GPUs -----------------*- C++ -*-===//

#ifndef KILN_CODEGEN_NVPTX_NVPTX_H
#define KILN_CODEGEN_NVPTX_NVPTX_H

#include "mlir/Pass/PassManager.h"

namespace kiln {

/// Whether LLVM's NVPTX back end knows `chip` (sm_80, sm_90a, ...).
bool isKnownNVPTXChip(llvm::StringRef chip);

/// Appends the NVPTX lowering: attaches `chip`, lowers the kernel module to
/// NVVM and serializes it to PTX.
llvm::LogicalResult buildNVPTXPipeline(mlir::OpPassManager &pm,
                                       llvm::StringRef chip,
                                       llvm::raw_ostream &errors);

} // namespace kiln

#endif // KILN_CODEGEN_NVPTX_NVPTX_H
