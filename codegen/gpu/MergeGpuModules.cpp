// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MergeGpuModules.cpp - one gpu.module per target --------------------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {

#define GEN_PASS_DEF_MERGEGPUMODULES
#include "codegen/gpu/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kMergedName = "kernels";

struct MergeGpuModules : impl::MergeGpuModulesBase<MergeGpuModules> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    auto modules = llvm::to_vector(module.getOps<mlir::gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    if (llvm::any_of(modules, [](mlir::gpu::GPUModuleOp m) { return m.getTargetsAttr(); })) {
      module.emitError("kernels must be merged before a target is attached");
      return signalPassFailure();
    }

    mlir::OpBuilder builder(modules.front());
    auto merged = mlir::gpu::GPUModuleOp::create(builder, modules.front().getLoc(), kMergedName);
    mlir::SymbolTable mergedSymbols(merged);
    // Each outlined module holds one kernel; the kernel takes the module's
    // (unique) name. Helpers a module may hold keep theirs, uniqued.
    llvm::DenseMap<mlir::Attribute, mlir::SymbolRefAttr> renamed;
    for (mlir::gpu::GPUModuleOp source : modules) {
      for (mlir::Operation &op : llvm::make_early_inc_range(source.getBody()->getOperations())) {
        auto symbol = mlir::dyn_cast<mlir::SymbolOpInterface>(&op);
        op.moveBefore(merged.getBody(), merged.getBody()->end());
        if (!symbol)
          continue;
        auto oldRef = mlir::SymbolRefAttr::get(
            source.getNameAttr(), {mlir::FlatSymbolRefAttr::get(symbol.getNameAttr())});
        bool isKernel = op.hasAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName());
        if (isKernel)
          symbol.setName(source.getNameAttr());
        mergedSymbols.insert(&op); // uniques the name on a clash
        renamed[oldRef] = mlir::SymbolRefAttr::get(
            merged.getNameAttr(), {mlir::FlatSymbolRefAttr::get(symbol.getNameAttr())});
      }
      source.erase();
    }

    module.walk([&](mlir::gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it != renamed.end())
        launch.setKernelAttr(it->second);
    });
  }
};

} // namespace
} // namespace kiln
