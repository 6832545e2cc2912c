//===- GpuCodegen.cpp - target-independent GPU kernel formation -----------===//

#include "codegen/gpu/GpuCodegen.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassRegistry.h"

namespace kiln {

llvm::LogicalResult buildGpuKernelPipeline(mlir::OpPassManager &pm,
                                           llvm::raw_ostream &errors) {
  // Memory is planned as on the host: one arena, one weights block. Then
  // every linalg op becomes a loop nest whose outer parallel dimensions are
  // tiled onto blocks and threads (parallel loops first; one thread when
  // there are none), and one launch of the plan.
  return mlir::parsePassPipeline(
      "kiln-bufferize,kiln-plan-memory,kiln-list-kernels,"
      "func.func(kiln-prepare-gpu-loops,convert-linalg-to-parallel-loops,"
      "scf-parallel-loop-tiling{parallel-loop-tile-sizes=1,1,8,8 no-min-max-bounds=true},"
      "gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
      "gpu-kernel-outlining,kiln-merge-gpu-modules,canonicalize,cse,kiln-list-launches",
      pm, errors);
}

llvm::FailureOr<std::string> kernelObject(mlir::ModuleOp module) {
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    for (mlir::Attribute object : binary.getObjects())
      if (auto attr = mlir::dyn_cast<mlir::gpu::ObjectAttr>(object))
        return attr.getObject().getValue().str();
  return module.emitError("the model produced no GPU kernels");
}

} // namespace kiln
