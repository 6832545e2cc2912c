//===- NVPTX.cpp - kernels to PTX for NVIDIA GPUs -------------------------===//

#include "codegen/nvptx/NVPTX.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>

namespace kiln {

bool isKnownNVPTXChip(llvm::StringRef chip) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  return info && info->isCPUStringValid(chip);
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
