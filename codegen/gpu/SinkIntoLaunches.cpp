// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- SinkIntoLaunches.cpp - what a kernel can compute, it computes ------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln {

#define GEN_PASS_DEF_SINKINTOLAUNCHES
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

/// What a kernel computes from what it is given rather than receiving it:
/// constants (of any dialect: the tensor-core kernels' poison vectors
/// among them), a buffer's sizes, and comparisons and choices between them.
bool sinks(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() ||
         isa<memref::DimOp, arith::SelectOp, arith::CmpIOp>(op);
}

/// A number the launch uses that converts an integer computed outside
/// (a mean's count): the kernel converts it, receiving the integer.
void sinkConversions(gpu::LaunchOp launch) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(launch.getBody(), captured);
  OpBuilder b(&launch.getBody().front(), launch.getBody().front().begin());
  for (Value value : captured) {
    Operation *conversion = value.getDefiningOp();
    if (!isa_and_nonnull<arith::SIToFPOp, arith::UIToFPOp>(conversion))
      continue;
    Value inside = b.clone(*conversion)->getResult(0);
    replaceAllUsesInRegionWith(value, inside, launch.getBody());
  }
}

struct SinkIntoLaunches : impl::SinkIntoLaunchesBase<SinkIntoLaunches> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](gpu::LaunchOp launch) {
      if (failed(sinkOperationsIntoLaunchOp(launch, sinks)))
        return WalkResult::interrupt();
      sinkConversions(launch);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
