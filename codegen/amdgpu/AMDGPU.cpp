//===- AMDGPU.cpp - kernels to HSA code objects for AMD GPUs --------------===//

#include "codegen/amdgpu/AMDGPU.h"

#include "codegen/Toolchain.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>

namespace kiln {

namespace {
constexpr llvm::StringLiteral kTriple = "amdgcn-amd-amdhsa";
} // namespace

bool isKnownAMDGPUChip(llvm::StringRef chip) {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTargetMC();
  return isKnownChip(kTriple, chip);
}

std::string findDeviceLibraries() {
  llvm::SmallVector<std::string> roots;
  if (const char *value = std::getenv("ROCM_PATH"))
    roots.push_back(value);
  roots.append({"/opt/rocm", "/usr/lib/x86_64-linux-gnu", "/usr/lib"});
  for (const std::string &root : roots) {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, "amdgcn", "bitcode", "ocml.bc");
    if (llvm::sys::fs::exists(path))
      return root;
  }
  return "";
}

llvm::LogicalResult buildAMDGPUPipeline(mlir::OpPassManager &pm, llvm::StringRef chip,
                                        llvm::raw_ostream &errors) {
  // Math functions come from the device libraries (ocml, ockl), which the
  // serializer finds under <toolkit>/amdgcn/bitcode.
  std::string toolkit = findDeviceLibraries();
  std::string toolkitOption = toolkit.empty() ? "" : " toolkit=" + toolkit;
  return mlir::parsePassPipeline(llvm::formatv("rocdl-attach-target{{chip={0} O=3},"
                                               "gpu.module(lower-affine,convert-scf-to-cf,"
                                               "convert-gpu-to-rocdl{{chipset={0}},"
                                               "reconcile-unrealized-casts,canonicalize,cse),"
                                               "gpu-module-to-binary{{format=isa{1}}",
                                               chip, toolkitOption)
                                     .str(),
                                 pm, errors);
}

llvm::FailureOr<std::string>
linkCodeObject(llvm::StringRef assembly, llvm::StringRef chip,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  auto object = mlir::ROCDL::assembleIsa(assembly, kTriple, chip, "", emitError);
  if (failed(object))
    return llvm::failure();
  return linkSharedObject({std::string(object->begin(), object->end())}, {}, emitError);
}

} // namespace kiln
