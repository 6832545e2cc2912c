//===- AMDGPU.cpp - kernels to HSA code objects for AMD GPUs --------------===//

#include "codegen/amdgpu/AMDGPU.h"

#include "codegen/gpu/GpuCodegen.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>

#ifndef KILN_LLVM_TOOLS_DIR
#define KILN_LLVM_TOOLS_DIR ""
#endif

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

llvm::LogicalResult buildAMDGPUPipeline(mlir::OpPassManager &pm,
                                        llvm::StringRef chip,
                                        llvm::raw_ostream &errors) {
  // Math functions come from the device libraries (ocml, ockl), which the
  // serializer finds under <toolkit>/amdgcn/bitcode.
  std::string toolkit = findDeviceLibraries();
  std::string toolkitOption = toolkit.empty() ? "" : " toolkit=" + toolkit;
  return mlir::parsePassPipeline(
      llvm::formatv("rocdl-attach-target{{chip={0} O=3},"
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
  // LLVM's own lld first, then whatever ld.lld is on PATH.
  llvm::ErrorOr<std::string> lld =
      llvm::sys::findProgramByName("ld.lld", {KILN_LLVM_TOOLS_DIR});
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    return emitError() << "ld.lld was not found; install lld-22 to link AMD code objects";

  // ld.lld turns the relocatable object into the shared object the HIP
  // runtime loads; it works on files.
  llvm::SmallString<128> objectPath, codeObjectPath;
  if (llvm::sys::fs::createTemporaryFile("kiln-kernels", "o", objectPath) ||
      llvm::sys::fs::createTemporaryFile("kiln-kernels", "hsaco", codeObjectPath))
    return emitError() << "cannot create temporary files for linking";
  llvm::FileRemover removeObject(objectPath), removeCodeObject(codeObjectPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(objectPath, ec);
    if (ec)
      return emitError() << "cannot write " << objectPath << ": " << ec.message();
    out.write(object->data(), object->size());
  }
  std::string message;
  int status = llvm::sys::ExecuteAndWait(
      *lld, {*lld, "-shared", objectPath, "-o", codeObjectPath}, std::nullopt,
      {}, 0, 0, &message);
  if (status != 0)
    return emitError() << "ld.lld failed to link the AMD code object"
                       << (message.empty() ? "" : ": " + message);
  auto linked = llvm::MemoryBuffer::getFile(codeObjectPath);
  if (!linked)
    return emitError() << "cannot read the linked code object";
  return (*linked)->getBuffer().str();
}

} // namespace kiln
