// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- GpuCodegen.cpp - target-independent GPU kernel formation -----------===//

#include "codegen/gpu/GpuCodegen.h"

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Transforms/Passes.h"

namespace kiln {

void buildGpuKernelPipeline(mlir::OpPassManager &pm, const TargetFeatures &features,
                            llvm::function_ref<void(mlir::OpPassManager &)> productKernels) {
  // Products become the target's kernels where it can (tensor cores), with
  // the kernels around them they take in (the buffers those wrote take no
  // memory, so this comes before memory is planned: one arena, one weights
  // block, as on the host), and row statistics warp-per-row kernels. Every
  // other linalg op becomes a loop nest whose parallel loops map onto
  // threads, one iteration each (parallel loops first; one thread when
  // there are none), except the transposes of the innermost dimension,
  // which go through shared memory. Each kernel is one launch of the plan.
  pm.addNestedPass<mlir::func::FuncOp>(createInlineScalarOperands());
  pm.addPass(createBufferize());
  mlir::OpPassManager &functions = pm.nest<mlir::func::FuncOp>();
  productKernels(functions);
  if (features.warpWidth)
    functions.addPass(createWarpRowReductions({int64_t(features.warpWidth)}));
  functions.addPass(createSharedTransposes());
  // A launch's sizes are programs the runtime evaluates, each on its own
  // and on a stack of format::kMaxDimDepth values: an offset of at most
  // 2^8 terms needs at most 9 of them, and leaves room for the views'
  // arithmetic around it.
  PlanMemoryOptions memory;
  memory.offsetTerms = 256;
  pm.addPass(createPlanMemory(memory));
  pm.addNestedPass<mlir::func::FuncOp>(createDropEmptyBuffers());
  pm.addPass(createListKernels());
  mlir::OpPassManager &loops = pm.nest<mlir::func::FuncOp>();
  loops.addPass(createPrepareGpuLoops());
  loops.addPass(mlir::createConvertLinalgToParallelLoopsPass());
  loops.addPass(createMapParallelLoops());
  // Constants sunk into the launches stay constants in the kernels.
  pm.addNestedPass<mlir::func::FuncOp>(createSinkIntoLaunches());
  pm.addPass(mlir::createGpuKernelOutliningPass());
  pm.addPass(createMergeGpuModules());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(createListLaunches());
}

llvm::FailureOr<std::string> kernelObject(mlir::ModuleOp module) {
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    for (mlir::Attribute object : binary.getObjects())
      if (auto attr = mlir::dyn_cast<mlir::gpu::ObjectAttr>(object))
        return attr.getObject().getValue().str();
  return module.emitError("the model produced no GPU kernels");
}

} // namespace kiln
