// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- NVPTXTarget.cpp - NVIDIA GPUs as a kiln target ---------------------===//

#include "codegen/gpu/GpuCodegen.h"
#include "codegen/nvptx/NVPTX.h"
#include "codegen/nvptx/Passes.h"
#include "runtime/format/artifact_generated.h"
#include "runtime/format/format.h"

#include "llvm/Support/FileSystem.h"

namespace kiln {

namespace {

constexpr EmitFormat kEmitFormats[] = {
    kKernelsEmitFormat,
    {"ptx", "PTX for an NVIDIA --target", Stage::Object},
};

constexpr TargetOption kOptions[] = {
    {"ptxas", "path",
     "The ptxas that assembles NVIDIA code into cubins for the artifact (default: found on "
     "PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin; none: PTX only)"},
};

/// The ptxas `options` name (--ptxas); empty for none.
std::string ptxasOf(const CodegenOptions &options) {
  std::string ptxas = options.targetOptions.lookup("ptxas");
  if (ptxas == "none")
    return "";
  return ptxas.empty() ? findPtxas() : ptxas;
}

/// Adds to `ptx` the global the runtime reads (cuModuleGetGlobal) and
/// compares with the manifest: `record` and a NUL, as bytes (PTX has no
/// string literals). It goes into the cubin assembled from `ptx` as well.
void appendPlanRecord(std::string &ptx, llvm::StringRef record) {
  ptx += "\n// What this code was compiled for (runtime/format/PlanRecord.h).\n"
         ".visible .global .align 1 .b8 " KILN_PLAN_RECORD_SYMBOL "[" +
         std::to_string(record.size() + 1) + "] = {";
  for (char c : record)
    ptx += std::to_string(unsigned(uint8_t(c))) + ",";
  ptx += "0};\n";
}

class NVPTXTarget : public Target {
public:
  explicit NVPTXTarget(std::string chip) : Target(std::move(chip)) {}

  llvm::StringRef family() const override { return kNVPTXFamily; }

  TargetFeatures features() const override {
    int architecture = nvidiaArchitecture(chip());
    TargetFeatures features;
    // Tensor cores multiply tf32, fp16 and bf16 from sm_80 on, and fp8
    // (E4M3) from sm_89; wgmma is sm_90a's alone (later architectures have
    // other instructions).
    MatrixUnit &unit = features.matrixUnit;
    if (architecture >= 80) {
      unit.kind = chip() == "sm_90a" ? MatrixUnit::Kind::Wgmma : MatrixUnit::Kind::MmaSync;
      unit.tf32 = true;
      if (architecture >= 89)
        unit.fp8 = Precision::FP8;
    }
    features.warpWidth = 32;
    return features;
  }

  Precision defaultPrecision() const override { return Precision::TF32; }
  // Tensor-core implicit GEMMs want each pixel's channels contiguous.
  Layout defaultLayout() const override { return Layout::NHWC; }

  llvm::Error checkInArtifact(const CodegenOptions &options) const override {
    std::string ptxas = ptxasOf(options);
    if (!ptxas.empty() && !llvm::sys::fs::can_execute(ptxas))
      return llvm::createStringError("--ptxas " + ptxas + ": no such program");
    return llvm::Error::success();
  }

  llvm::LogicalResult buildPipeline(mlir::OpPassManager &pm, Stage stage,
                                    const CodegenOptions &options,
                                    llvm::raw_ostream &errors) const override {
    TargetFeatures chipFeatures = features();
    const MatrixUnit &unit = chipFeatures.matrixUnit;
    auto productKernels = [&](mlir::OpPassManager &functions) {
      if (unit.kind == MatrixUnit::Kind::None)
        return;
      TensorCoreProductsOptions products;
      products.fp8 = unit.fp8.has_value();
      products.wgmma = unit.kind == MatrixUnit::Kind::Wgmma;
      functions.addPass(createTensorCoreProducts(products));
    };
    buildGpuKernelPipeline(pm, chipFeatures, productKernels);
    return stage == Stage::Object ? buildNVPTXPipeline(pm, chip(), errors) : llvm::success();
  }

  llvm::FailureOr<TargetCode> serialize(mlir::ModuleOp module, const CodegenOptions &options,
                                        mlir::TimingScope &timing) const override {
    llvm::FailureOr<std::string> ptx = emit(module, "ptx", timing);
    if (failed(ptx))
      return llvm::failure();
    auto record = module->getAttrOfType<mlir::StringAttr>(kPlanRecordAttr);
    if (!record)
      return module.emitError("the plan has no record of what it was compiled for");
    appendPlanRecord(*ptx, record.getValue());
    TargetCode code;
    code.name = chip().str();
    std::string ptxas = ptxasOf(options);
    if (ptxas.empty()) {
      code.code.push_back({artifact::CodeKind::PTX, std::move(*ptx)});
      return code;
    }
    mlir::TimingScope ptxasTimer = timing.nest("ptxas for " + chip().str());
    llvm::FailureOr<Cubin> cubin =
        assemblePTX(ptxas, *ptx, chip(), [&] { return module.emitError(); });
    if (failed(cubin))
      return llvm::failure();
    code.code.push_back({artifact::CodeKind::PTX, std::move(*ptx)});
    code.code.push_back({artifact::CodeKind::Cubin, std::move(cubin->object)});
    code.resources = std::move(cubin->kernels);
    return code;
  }

  llvm::FailureOr<std::string> emit(mlir::ModuleOp module, llvm::StringRef format,
                                    mlir::TimingScope &timing) const override {
    llvm::FailureOr<std::string> ptx = kernelObject(module);
    if (failed(ptx) || failed(checkLinked(*ptx, [&] { return module.emitError(); })))
      return llvm::failure();
    return ptx;
  }
};

} // namespace

llvm::ArrayRef<EmitFormat> nvptxEmitFormats() { return kEmitFormats; }

llvm::ArrayRef<TargetOption> nvptxOptions() { return kOptions; }

llvm::Expected<std::unique_ptr<Target>> createNVPTXTarget(llvm::StringRef name,
                                                          llvm::StringRef hostCPU) {
  if (!name.starts_with("sm_") || !isKnownNVPTXChip(name))
    return nullptr;
  return std::make_unique<NVPTXTarget>(name.str());
}

} // namespace kiln
