// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- NVPTX.cpp - kernels to PTX for NVIDIA GPUs -------------------------===//

#include "codegen/nvptx/NVPTX.h"

#include "codegen/Toolchain.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>

namespace kiln {

bool isKnownNVPTXChip(llvm::StringRef chip) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  return isKnownChip("nvptx64-nvidia-cuda", chip);
}

int nvidiaArchitecture(llvm::StringRef chip) {
  unsigned number = 0;
  if (!chip.consume_front("sm_") || chip.consumeInteger(10, number))
    return 0;
  return int(number);
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

namespace {

/// Declares of every kernel that two of its blocks per SM are enough
/// (`.minnctapersm 2`). Left to itself, ptxas spills a few registers to fit
/// more blocks when a kernel needs a little over a round number of them
/// (64 where 72 would do); with its launch bounds declared it does not.
/// Aligns shared memory to 16 bytes, for 16-byte cp.async.
struct DeclareKernelProperties
    : mlir::PassWrapper<DeclareKernelProperties, mlir::OperationPass<mlir::gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DeclareKernelProperties)

  void runOnOperation() override {
    mlir::Builder b(&getContext());
    for (auto kernel : getOperation().getOps<mlir::gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      kernel->setAttr(mlir::NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(2));
      for (unsigned i = 0; i < kernel.getNumWorkgroupAttributions(); ++i)
        kernel.setWorkgroupAttributionAttr(i, mlir::LLVM::LLVMDialect::getAlignAttrName(),
                                           b.getI64IntegerAttr(16));
    }
  }
};

} // namespace

llvm::LogicalResult buildNVPTXPipeline(mlir::OpPassManager &pm, llvm::StringRef chip,
                                       llvm::raw_ostream &errors) {
  // Math functions (erf, tanh, exp, ...) come from CUDA's libdevice.
  std::string libdevice = findLibdevice();
  std::string options = libdevice.empty() ? "" : " l=" + libdevice;
  // fp8 tensor-core instructions need PTX ISA 8.4, above what LLVM emits
  // for sm_89 and sm_90 by default. Newer chips default to a newer ISA
  // already (sm_100 to 8.6, sm_120 to 8.7), which a lower one named here
  // would override.
  int architecture = nvidiaArchitecture(chip);
  if (architecture >= 89 && architecture < 100)
    options += " features=+ptx84";
  if (failed(mlir::parsePassPipeline(
          llvm::formatv("nvvm-attach-target{{chip={0} O=3{1}}", chip, options).str(), pm, errors)))
    return llvm::failure();
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(std::make_unique<DeclareKernelProperties>());
  return mlir::parsePassPipeline("gpu.module(lower-affine,convert-scf-to-cf,convert-nvgpu-to-nvvm,"
                                 "convert-gpu-to-nvvm,convert-nvvm-to-llvm,"
                                 "reconcile-unrealized-casts,canonicalize,cse),"
                                 "gpu-module-to-binary{format=isa}",
                                 pm, errors);
}

llvm::LogicalResult checkLinked(llvm::StringRef ptx,
                                llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  size_t at = ptx.find(".extern .func");
  if (at == llvm::StringRef::npos)
    return llvm::success();
  llvm::StringRef line = ptx.substr(at).take_until([](char c) { return c == '\n'; });
  return emitError() << "the kernels call a function no library provides (" << line.trim()
                     << "); math functions need CUDA's libdevice: "
                     << "set CUDA_HOME to the CUDA toolkit";
}

std::string findPtxas() {
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  llvm::SmallVector<std::string> roots;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable))
      roots.push_back(value);
  roots.push_back("/usr/local/cuda");
  for (const std::string &root : roots) {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
  }
  return "";
}

llvm::StringMap<KernelResources> parsePtxasReport(llvm::StringRef report) {
  // ptxas info    : Compiling entry function 'main_kernel' for 'sm_90'
  // ptxas info    : Function properties for main_kernel
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 16 registers, used 0 barriers, 1024 bytes smem, ...
  llvm::StringMap<KernelResources> kernels;
  KernelResources *current = nullptr;
  // The number just before `unit` in `line`, or 0.
  auto numberBefore = [](llvm::StringRef line, llvm::StringRef unit) {
    size_t at = line.find(unit);
    if (at == llvm::StringRef::npos)
      return 0u;
    llvm::StringRef digits = line.take_front(at).rtrim();
    digits = digits.drop_front(digits.find_last_not_of("0123456789") + 1);
    unsigned value = 0;
    return digits.getAsInteger(10, value) ? 0u : value;
  };
  llvm::SmallVector<llvm::StringRef> lines;
  report.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (size_t at = line.find("Compiling entry function '"); at != llvm::StringRef::npos) {
      llvm::StringRef name = line.drop_front(at + 26).take_until([](char c) { return c == '\''; });
      current = &kernels[name];
    } else if (current && line.contains("bytes spill stores")) {
      current->spillBytes =
          numberBefore(line, " bytes spill stores") + numberBefore(line, " bytes spill loads");
    } else if (current && line.contains("Used ") && line.contains(" registers")) {
      current->registers = numberBefore(line, " registers");
      current->sharedBytes = numberBefore(line, " bytes smem");
    }
  }
  return kernels;
}

llvm::FailureOr<Cubin> assemblePTX(llvm::StringRef ptxas, llvm::StringRef ptx, llvm::StringRef chip,
                                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  llvm::SmallString<128> ptxPath, cubinPath, reportPath;
  if (llvm::sys::fs::createTemporaryFile("kiln", "ptx", ptxPath) ||
      llvm::sys::fs::createTemporaryFile("kiln", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("kiln", "txt", reportPath))
    return emitError() << "cannot create temporary files for ptxas";
  llvm::FileRemover removePtx(ptxPath), removeCubin(cubinPath), removeReport(reportPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(ptxPath, ec);
    if (ec)
      return emitError() << "cannot write " << ptxPath << ": " << ec.message();
    out << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-v", ptxPath, "-o", cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, reportPath, reportPath};
  std::string message;
  int code = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &message);
  auto report = llvm::MemoryBuffer::getFile(reportPath);
  llvm::StringRef text = report ? (*report)->getBuffer() : "";
  if (code != 0) {
    // Only ptxas's errors, not its report on the kernels it did assemble.
    std::string errors;
    llvm::SmallVector<llvm::StringRef> lines;
    text.split(lines, '\n');
    for (llvm::StringRef line : lines)
      if (!line.starts_with("ptxas info") && !line.starts_with(" ") && !line.trim().empty())
        errors += (errors.empty() ? "" : "; ") + line.trim().str();
    if (errors.empty())
      errors = message.empty() ? "exit status " + std::to_string(code) : message;
    if (text.contains("is not defined for option 'gpu-name'"))
      return emitError() << ptxas << " does not know " << chip
                         << " (newer than its CUDA toolkit, or no longer supported by it): "
                            "give another ptxas with --ptxas, or --ptxas none to ship PTX only";
    return emitError() << ptxas << " cannot assemble the kernels for " << chip << ": " << errors;
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath);
  if (!cubin)
    return emitError() << "cannot read what ptxas wrote";
  return Cubin{(*cubin)->getBuffer().str(), parsePtxasReport(text)};
}

} // namespace kiln
