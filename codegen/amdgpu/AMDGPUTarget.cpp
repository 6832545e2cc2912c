// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- AMDGPUTarget.cpp - AMD GPUs as a kiln target -----------------------===//

#include "codegen/amdgpu/AMDGPU.h"
#include "codegen/amdgpu/Passes.h"
#include "codegen/gpu/GpuCodegen.h"
#include "runtime/format/artifact_generated.h"

namespace kiln {

namespace {

constexpr EmitFormat kEmitFormats[] = {
    kKernelsEmitFormat,
    {"amdgcn", "AMDGPU assembly for an AMD --target", Stage::Object},
    {"hsaco", "an HSA code object (ELF) for an AMD --target", Stage::Object},
};

class AMDGPUTarget : public Target {
public:
  explicit AMDGPUTarget(std::string chip) : Target(std::move(chip)) {}

  llvm::StringRef family() const override { return kAMDGPUFamily; }
  // On CDNA chips products run on MFMA (kiln-matrix-core-products), and
  // row statistics take a wavefront of 64 a row. Other chips (RDNA's, which
  // run wave32 and have no MFMA) keep plain loops.
  TargetFeatures features() const override {
    TargetFeatures features;
    if (!matrixCores())
      return features;
    // xf32 is CDNA3's (gfx940 to gfx942): gfx950 dropped it. fp8 MFMA is
    // CDNA3's and gfx950's, which reads OCP's E4M3FN as NVIDIA's chips do.
    features.matrixUnit.kind = MatrixUnit::Kind::Mfma;
    features.matrixUnit.tf32 = fnuz();
    if (fnuz())
      features.matrixUnit.fp8 = Precision::FP8FNUZ;
    else if (chip() == "gfx950")
      features.matrixUnit.fp8 = Precision::FP8;
    features.warpWidth = 64;
    return features;
  }

  /// gfx90a (MI200) and CDNA3 on (gfx940, gfx941, gfx942, gfx950): MFMA
  /// for fp32, fp16 and bf16 with four bf16 a lane (gfx908's bf16 MFMA
  /// takes two, and is left out).
  bool matrixCores() const {
    return llvm::is_contained({"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"}, chip());
  }
  /// CDNA3's first chips, whose fp8 is E4M3FNUZ.
  bool fnuz() const { return llvm::is_contained({"gfx940", "gfx941", "gfx942"}, chip()); }
  Precision defaultPrecision() const override { return Precision::TF32; }
  Layout defaultLayout() const override { return Layout::NHWC; }

  llvm::LogicalResult buildPipeline(mlir::OpPassManager &pm, Stage stage,
                                    const CodegenOptions &options,
                                    llvm::raw_ostream &errors) const override {
    TargetFeatures chipFeatures = features();
    const MatrixUnit &unit = chipFeatures.matrixUnit;
    auto productKernels = [&](mlir::OpPassManager &functions) {
      if (unit.kind != MatrixUnit::Kind::Mfma)
        return;
      MatrixCoreProductsOptions products;
      products.xf32 = unit.tf32;
      if (unit.fp8)
        products.fp8 = precisionName(*unit.fp8).str();
      functions.addPass(createMatrixCoreProducts(products));
    };
    buildGpuKernelPipeline(pm, chipFeatures, productKernels);
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
    code.code.push_back({artifact::CodeKind::HSACO, std::move(*object)});
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

llvm::ArrayRef<EmitFormat> amdgpuEmitFormats() { return kEmitFormats; }

llvm::Expected<std::unique_ptr<Target>> createAMDGPUTarget(llvm::StringRef name,
                                                           llvm::StringRef hostCPU) {
  if (!name.starts_with("gfx") || !isKnownAMDGPUChip(name))
    return nullptr;
  return std::make_unique<AMDGPUTarget>(name.str());
}

} // namespace kiln
