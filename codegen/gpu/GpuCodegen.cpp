//===- GpuCodegen.cpp - target-independent GPU kernel formation -----------===//

#include "codegen/gpu/GpuCodegen.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"

namespace kiln {

llvm::LogicalResult buildGpuKernelPipeline(mlir::OpPassManager &pm, TensorCores tensorCores,
                                           bool warpRows, llvm::raw_ostream &errors) {
  // Products become tensor-core kernels where they can, with the kernels
  // around them they take in (the buffers those wrote take no memory, so
  // this comes before memory is planned: one arena, one weights block, as
  // on the host), and row statistics warp-per-row kernels. Every other
  // linalg op becomes a loop nest whose parallel loops map onto threads,
  // one iteration each (parallel loops first; one thread when there are
  // none), except the transposes of the innermost dimension, which go
  // through shared memory. Each kernel is one launch of the plan.
  std::vector<std::string> kernels;
  if (tensorCores == TensorCores::Hopper)
    kernels.push_back("kiln-tensor-core-products{fp8=true wgmma=true}");
  else if (tensorCores == TensorCores::Ada)
    kernels.push_back("kiln-tensor-core-products{fp8=true}");
  else if (tensorCores == TensorCores::Ampere)
    kernels.push_back("kiln-tensor-core-products");
  if (warpRows)
    kernels.push_back("kiln-warp-row-reductions");
  kernels.push_back("kiln-shared-transposes");
  std::string pipeline = "kiln-bufferize,func.func(" + llvm::join(kernels, ",") + "),";
  pipeline += "kiln-plan-memory,kiln-list-kernels,func.func(kiln-prepare-gpu-loops,"
              "convert-linalg-to-parallel-loops,kiln-map-parallel-loops),"
              "gpu-launch-sink-index-computations,gpu-kernel-outlining,kiln-merge-gpu-modules,"
              "canonicalize,cse,kiln-list-launches";
  return mlir::parsePassPipeline(pipeline, pm, errors);
}

llvm::FailureOr<std::string> kernelObject(mlir::ModuleOp module) {
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    for (mlir::Attribute object : binary.getObjects())
      if (auto attr = mlir::dyn_cast<mlir::gpu::ObjectAttr>(object))
        return attr.getObject().getValue().str();
  return module.emitError("the model produced no GPU kernels");
}

} // namespace kiln
