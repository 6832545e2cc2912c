//===- Pipeline.cpp - what `kiln compile` runs, per target ----------------===//

#include "compiler/pipeline/Pipeline.h"

#include "codegen/amdgpu/AMDGPU.h"
#include "codegen/gpu/GpuCodegen.h"
#include "codegen/gpu/Passes.h"
#include "codegen/host/Host.h"
#include "codegen/host/Passes.h"
#include "codegen/kernels/Passes.h"
#include "codegen/nvptx/NVPTX.h"
#include "codegen/nvptx/Passes.h"
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace kiln {

llvm::FailureOr<llvm::SmallVector<Target>> parseTargets(llvm::StringRef list,
                                                        llvm::StringRef hostCPU,
                                                        std::string &error) {
  llvm::SmallVector<Target> targets;
  llvm::SmallVector<llvm::StringRef> names;
  list.split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef raw : names) {
    llvm::StringRef name = raw.trim();
    if (name == "host") {
      if (!isKnownHostCPU(hostCPU)) {
        error = "unknown host CPU '" + hostCPU.str() +
                "': expected an x86-64 CPU as LLVM names it, such as x86-64-v3, "
                "znver4 or native";
        return llvm::failure();
      }
      targets.push_back({Target::Kind::Host, hostCPU.str()});
    } else if (name.starts_with("sm_") && isKnownNVPTXChip(name)) {
      targets.push_back({Target::Kind::NVPTX, name.str()});
    } else if (name.starts_with("gfx") && isKnownAMDGPUChip(name)) {
      targets.push_back({Target::Kind::AMDGPU, name.str()});
    } else {
      error = "unknown target '" + name.str() +
              "': expected host, an NVIDIA architecture such as sm_80 or "
              "sm_90a, or an AMD one such as gfx90a or gfx942";
      return llvm::failure();
    }
  }
  if (targets.empty()) {
    error = "--target names no target";
    return llvm::failure();
  }
  return targets;
}

void registerCompilerDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<KilnDialect>();
}

void registerCompilerPasses() {
  mlir::registerAllPasses();
  registerKilnPasses();
  registerKilnKernelsPasses();
  registerKilnGpuPasses();
  registerKilnHostPasses();
  registerKilnNVPTXPasses();
}

llvm::LogicalResult runPipeline(mlir::ModuleOp module, const Target &target,
                                Stage stage, mlir::TimingScope &timing,
                                const GraphOptions &graph) {
  mlir::PassManager pm(module.getContext());
  pm.enableTiming(timing);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  // Graph optimization is the same for every target.
  llvm::LogicalResult built = mlir::parsePassPipeline(
      graph.fuse ? "func.func(kiln-fold-batch-norm,kiln-fuse-layer-norm,kiln-fuse-gelu),canonicalize,cse"
                 : "canonicalize,cse",
      pm, errorStream);
  AssignLayoutOptions layout;
  layout.layout = !graph.layout.empty() ? graph.layout : target.isHost() ? "nchw" : "nhwc";
  pm.addPass(createAssignLayout(layout));
  pm.addPass(mlir::createCanonicalizerPass());
  AssignPrecisionOptions precision;
  precision.precision = !graph.precision.empty() ? graph.precision
                        : target.isHost()        ? "fp32"
                                                 : "tf32";
  precision.keepFp32.assign(graph.keepFp32.begin(), graph.keepFp32.end());
  precision.calibration = graph.calibration;
  pm.addPass(createAssignPrecision(precision));
  pm.addPass(mlir::createCSEPass());
  // Kernel generation too; then each target's lowering.
  if (succeeded(built) && stage != Stage::Graph) {
    pm.addPass(createLowerToLinalg());
    if (graph.fuse)
      pm.addNestedPass<mlir::func::FuncOp>(createFuseElementwise());
  }
  if (failed(built) || stage == Stage::Graph || stage == Stage::Linalg) {
  } else if (target.isHost()) {
    built = buildHostPipeline(pm, target.chip, graph.fuse, errorStream);
  } else {
    int architecture = target.isNVPTX() ? nvidiaArchitecture(target.chip) : 0;
    // wgmma is sm_90a's alone (later architectures have other instructions).
    TensorCores tensorCores = target.chip == "sm_90a" ? TensorCores::Hopper
                              : architecture >= 89   ? TensorCores::Ada
                              : architecture >= 80 ? TensorCores::Ampere
                                                   : TensorCores::None;
    built = buildGpuKernelPipeline(pm, tensorCores, target.isNVPTX(), errorStream);
    if (succeeded(built) && stage == Stage::Object)
      built = target.isNVPTX() ? buildNVPTXPipeline(pm, target.chip, errorStream)
                               : buildAMDGPUPipeline(pm, target.chip, errorStream);
  }
  if (failed(built))
    return module.emitError("internal error: cannot build the pipeline: ") << errors;
  if (failed(pm.run(module)))
    return llvm::failure();
  if (target.isHost() && stage == Stage::Object)
    return addHostEntryPoint(module);
  return llvm::success();
}

} // namespace kiln
