//===- NVPTX.cpp - kernels to PTX for NVIDIA GPUs -------------------------===//

#include "codegen/nvptx/NVPTX.h"

#include "codegen/gpu/GpuCodegen.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"

namespace kiln {

bool isKnownNVPTXChip(llvm::StringRef chip) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  return isKnownChip("nvptx64-nvidia-cuda", chip);
}

llvm::LogicalResult buildNVPTXPipeline(mlir::OpPassManager &pm,
                                       llvm::StringRef chip,
                                       llvm::raw_ostream &errors) {
  return mlir::parsePassPipeline(
      llvm::formatv("nvvm-attach-target{{chip={0} O=3},"
                    "gpu.module(lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm,"
                    "reconcile-unrealized-casts,canonicalize,cse),"
                    "gpu-module-to-binary{{format=isa}",
                    chip)
          .str(),
      pm, errors);
}

} // namespace kiln
