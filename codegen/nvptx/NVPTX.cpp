//===- NVPTX.cpp - kernels to PTX for NVIDIA GPUs -------------------------===//

#include "codegen/nvptx/NVPTX.h"

#include "codegen/Toolchain.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>

namespace kiln {

bool isKnownNVPTXChip(llvm::StringRef chip) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  return isKnownChip("nvptx64-nvidia-cuda", chip);
}

std::string findLibdevice() {
  llvm::SmallVector<std::string> roots;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable))
      roots.push_back(value);
  roots.push_back("/usr/local/cuda");
  roots.push_back("/usr/lib/cuda");
  for (const std::string &root : roots) {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  }
  return "";
}

llvm::LogicalResult buildNVPTXPipeline(mlir::OpPassManager &pm,
                                       llvm::StringRef chip,
                                       llvm::raw_ostream &errors) {
  // Math functions (erf, tanh, exp, ...) come from CUDA's libdevice.
  std::string libdevice = findLibdevice();
  std::string link = libdevice.empty() ? "" : " l=" + libdevice;
  return mlir::parsePassPipeline(
      llvm::formatv("nvvm-attach-target{{chip={0} O=3{1}},"
                    "gpu.module(lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm,"
                    "reconcile-unrealized-casts,canonicalize,cse),"
                    "gpu-module-to-binary{{format=isa}",
                    chip, link)
          .str(),
      pm, errors);
}

llvm::LogicalResult
checkLinked(llvm::StringRef ptx,
            llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  size_t at = ptx.find(".extern .func");
  if (at == llvm::StringRef::npos)
    return llvm::success();
  llvm::StringRef line = ptx.substr(at).take_until([](char c) { return c == '\n'; });
  return emitError() << "the kernels call a function no library provides ("
                     << line.trim() << "); math functions need CUDA's libdevice: "
                     << "set CUDA_HOME to the CUDA toolkit";
}

} // namespace kiln
