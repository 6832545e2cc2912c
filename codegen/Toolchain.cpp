// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Toolchain.cpp - what kiln asks of LLVM's back ends and lld ---------===//

#include "codegen/Toolchain.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Triple.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

#ifndef KILN_LLVM_TOOLS_DIR
#define KILN_LLVM_TOOLS_DIR ""
#endif

namespace kiln {

bool isKnownChip(llvm::StringRef tripleName, llvm::StringRef chip) {
  llvm::Triple triple(tripleName);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  return info && info->isCPUStringValid(chip);
}

llvm::FailureOr<std::string>
linkSharedObject(llvm::ArrayRef<std::string> objects, llvm::ArrayRef<llvm::StringRef> flags,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  llvm::ErrorOr<std::string> lld = llvm::sys::findProgramByName("ld.lld", {KILN_LLVM_TOOLS_DIR});
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    return emitError() << "ld.lld was not found; install lld-22";

  // ld.lld works on files.
  llvm::SmallString<128> outputPath;
  if (llvm::sys::fs::createTemporaryFile("kiln", "so", outputPath))
    return emitError() << "cannot create temporary files for linking";
  llvm::FileRemover removeOutput(outputPath);
  std::vector<llvm::SmallString<128>> objectPaths(objects.size());
  std::vector<llvm::FileRemover> removeObjects(objects.size());
  for (auto [object, path, remover] : llvm::zip_equal(objects, objectPaths, removeObjects)) {
    if (llvm::sys::fs::createTemporaryFile("kiln", "o", path))
      return emitError() << "cannot create temporary files for linking";
    remover.setFile(path);
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      return emitError() << "cannot write " << path << ": " << ec.message();
    out.write(object.data(), object.size());
  }
  llvm::SmallVector<llvm::StringRef> args = {*lld, "-shared"};
  llvm::append_range(args, flags);
  for (const llvm::SmallString<128> &path : objectPaths)
    args.push_back(path);
  args.append({"-o", outputPath});
  std::string message;
  if (llvm::sys::ExecuteAndWait(*lld, args, std::nullopt, {}, 0, 0, &message) != 0)
    return emitError() << "ld.lld failed to link the code object"
                       << (message.empty() ? "" : ": " + message);
  auto linked = llvm::MemoryBuffer::getFile(outputPath);
  if (!linked)
    return emitError() << "cannot read the linked code object";
  return (*linked)->getBuffer().str();
}

} // namespace kiln
