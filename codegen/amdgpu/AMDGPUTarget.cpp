//===- AMDGPUTarget.cpp - AMD GPUs as a kiln target -----------------------===//

#include "codegen/amdgpu/AMDGPU.h"
#include "codegen/gpu/GpuCodegen.h"

namespace kiln {

namespace {

constexpr llvm::StringLiteral kEmitFormats[] = {"kernels", "amdgcn", "hsaco"};

class AMDGPUTarget : public Target {
public:
  explicit AMDGPUTarget(std::string chip) : Target(std::move(chip)) {}

  llvm::StringRef family() const override { return kAMDGPUFamily; }
  // Products and row statistics run as plain loops: no MFMA kernels and no
  // wave-per-row reductions yet.
  TargetFeatures features() const override { return {}; }
  Precision defaultPrecision() const override { return Precision::TF32; }
  Layout defaultLayout() const override { return Layout::NHWC; }

  llvm::LogicalResult buildPipeline(mlir::OpPassManager &pm, Stage stage,
                                    const CodegenOptions &options,
                                    llvm::raw_ostream &errors) const override {
    buildGpuKernelPipeline(pm, features(), [](mlir::OpPassManager &) {});
    return stage == Stage::Object ? buildAMDGPUPipeline(pm, chip(), errors) : llvm::success();
  }

  llvm::FailureOr<TargetCode> serialize(mlir::ModuleOp module, const CodegenOptions &options,
                                        mlir::TimingScope &timing) const override {
    llvm::FailureOr<std::string> assembly = kernelObject(module);
    if (failed(assembly))
      return llvm::failure();
    auto record = module->getAttrOfType<mlir::StringAttr>(kPlanRecordAttr);
    if (!record)
      return module.emitError("the plan has no record of what it was compiled for");
    appendPlanRecord(*assembly, record.getValue());
    mlir::TimingScope linkTimer = timing.nest("link code object for " + chip().str());
    auto emitError = [&] { return module.emitError(); };
    llvm::FailureOr<std::string> object = linkCodeObject(*assembly, chip(), emitError);
    if (failed(object))
      return llvm::failure();
    llvm::FailureOr<llvm::StringMap<KernelResources>> resources =
        readKernelResources(*object, emitError);
    if (failed(resources))
      return llvm::failure();
    TargetCode code;
    code.name = chip().str();
    code.code.push_back({CodeObject::Format::HSACO, std::move(*object)});
    code.resources = std::move(*resources);
    return code;
  }

  llvm::FailureOr<std::string> emit(mlir::ModuleOp module, llvm::StringRef format,
                                    mlir::TimingScope &timing) const override {
    llvm::FailureOr<std::string> assembly = kernelObject(module);
    if (failed(assembly) || format != "hsaco")
      return assembly;
    mlir::TimingScope linkTimer = timing.nest("link code object");
    return linkCodeObject(*assembly, chip(), [&] { return module.emitError(); });
  }
};

} // namespace

llvm::ArrayRef<llvm::StringLiteral> amdgpuEmitFormats() { return kEmitFormats; }

std::unique_ptr<Target> createAMDGPUTarget(llvm::StringRef name, llvm::StringRef hostCPU,
                                           std::string &error) {
  if (!name.starts_with("gfx") || !isKnownAMDGPUChip(name))
    return nullptr;
  return std::make_unique<AMDGPUTarget>(name.str());
}

} // namespace kiln
