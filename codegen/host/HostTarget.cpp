// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- HostTarget.cpp - the host CPU as a kiln target ---------------------===//

#include "codegen/host/Host.h"
#include "runtime/format/artifact_generated.h"

namespace kiln {

namespace {

constexpr EmitFormat kEmitFormats[] = {
    {"llvm", "optimized LLVM IR of the host code", Stage::Object},
    {"obj", "an x86-64 object of the host code", Stage::Object},
    {"so", "the host code as the shared object the runtime loads", Stage::Object},
};
/// The parts of a shared object's code per compiler thread (see
/// splitHostModule): two let a thread that finishes early take another's.
constexpr unsigned kPartsPerThread = 2;

class HostTarget : public Target {
public:
  explicit HostTarget(std::string chip) : Target(std::move(chip)) {}

  std::string codeTarget() const override { return hostLevel(chip()); }
  llvm::StringRef family() const override { return kHostFamily; }
  TargetFeatures features() const override { return {}; }
  Precision defaultPrecision() const override { return Precision::FP32; }
  // Register tiles take output positions as columns, so each task gathers
  // the im2col columns it reads; channels last, the gathered operand would
  // be the broadcast one.
  Layout defaultLayout() const override { return Layout::NCHW; }

  llvm::LogicalResult buildPipeline(mlir::OpPassManager &pm, Stage stage,
                                    const CodegenOptions &options,
                                    llvm::raw_ostream &errors) const override {
    if (stage != Stage::Object) {
      errors << "the host target has no stage but its object";
      return llvm::failure();
    }
    return buildHostPipeline(pm, chip(), options.fuse, errors);
  }

  llvm::LogicalResult finishObject(mlir::ModuleOp module) const override {
    return addHostEntryPoint(module);
  }

  llvm::FailureOr<TargetCode> serialize(mlir::ModuleOp module, const CodegenOptions &options,
                                        mlir::TimingScope &timing) const override {
    llvm::FailureOr<std::string> object = emit(module, "so", timing);
    if (failed(object))
      return llvm::failure();
    TargetCode code;
    code.name = codeTarget();
    code.code.push_back({artifact::CodeKind::HostSharedObject, std::move(*object)});
    return code;
  }

  llvm::FailureOr<std::string> emit(mlir::ModuleOp module, llvm::StringRef format,
                                    mlir::TimingScope &timing) const override {
    // An object or LLVM IR is one module, compiled whole; the shared object
    // links parts compiled side by side, a few per thread so that the
    // threads finish together.
    mlir::MLIRContext *context = module.getContext();
    unsigned parts = format == "so" && context->isMultithreadingEnabled()
                         ? kPartsPerThread * context->getNumThreads()
                         : 1;
    std::string llvmIR;
    llvm::FailureOr<std::vector<std::string>> objects = llvm::failure();
    {
      mlir::TimingScope llvmTimer = timing.nest("LLVM");
      objects = compileHostObjects(module, chip(), parts, llvmTimer,
                                   format == "llvm" ? &llvmIR : nullptr);
    }
    if (failed(objects))
      return llvm::failure();
    if (format == "llvm")
      return llvmIR;
    if (format == "so") {
      mlir::TimingScope linkTimer = timing.nest("link");
      return linkHostCode(module, *objects);
    }
    return objects->front();
  }
};

} // namespace

llvm::ArrayRef<EmitFormat> hostEmitFormats() { return kEmitFormats; }

llvm::Expected<std::unique_ptr<Target>> createHostTarget(llvm::StringRef name,
                                                         llvm::StringRef cpu) {
  if (name != "host")
    return nullptr;
  if (!isKnownHostCPU(cpu))
    return llvm::createStringError(
        "unknown host CPU '" + cpu +
        "': expected an x86-64 CPU as LLVM names it, such as x86-64-v3, znver4 or native");
  return std::make_unique<HostTarget>(cpu.str());
}

} // namespace kiln
