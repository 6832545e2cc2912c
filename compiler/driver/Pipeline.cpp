// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Pipeline.cpp - the passes a compilation runs, stage by stage -------===//

#include "compiler/driver/Pipeline.h"

#include "codegen/kernels/Passes.h"
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

namespace kiln {

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
  registerTargetPasses();
}

void populateGraphOptimization(mlir::OpPassManager &pm, const GraphOptions &options, bool fuse,
                               const Target &target) {
  if (fuse) {
    mlir::OpPassManager &functions = pm.nest<mlir::func::FuncOp>();
    functions.addPass(createFoldBatchNorm());
    functions.addPass(createFuseLayerNorm());
    functions.addPass(createFuseGelu());
  }
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  AssignLayoutOptions layout;
  layout.layout = layoutName(options.layout.value_or(target.defaultLayout())).str();
  pm.addPass(createAssignLayout(layout));
  pm.addPass(mlir::createCanonicalizerPass());
  Precision format = options.precision.value_or(target.defaultPrecision());
  if (format == Precision::FP8)
    format = target.fp8Format();
  AssignPrecisionOptions precision;
  precision.precision = precisionName(format).str();
  precision.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
  precision.calibration = options.calibration;
  pm.addPass(createAssignPrecision(precision));
  pm.addPass(mlir::createCSEPass());
}

void populateKernelGeneration(mlir::OpPassManager &pm, bool fuse) {
  pm.addPass(createLowerToLinalg());
  if (fuse)
    pm.addNestedPass<mlir::func::FuncOp>(createFuseElementwise());
}

llvm::LogicalResult runPipeline(mlir::ModuleOp module, const Target &target, Stage stop,
                                const GraphOptions &graph, const CodegenOptions &codegen,
                                mlir::TimingScope &timing) {
  mlir::PassManager pm(module.getContext());
  pm.enableTiming(timing);
  populateGraphOptimization(pm, graph, codegen.fuse, target);
  if (stop != Stage::Graph)
    populateKernelGeneration(pm, codegen.fuse);
  if (stop == Stage::Kernels || stop == Stage::Object) {
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    if (failed(target.buildPipeline(pm, stop, codegen, errorStream)))
      return module.emitError("internal error: cannot build the pipeline: ") << errors;
  }
  if (failed(pm.run(module)))
    return llvm::failure();
  return stop == Stage::Object ? target.finishObject(module) : llvm::success();
}

} // namespace kiln
