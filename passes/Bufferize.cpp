//===- Bufferize.cpp - One-Shot bufferization with linalg copies ----------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"

namespace kiln {

#define GEN_PASS_DEF_BUFFERIZE
#include "passes/Passes.h.inc"

namespace {

struct Bufferize : impl::BufferizeBase<Bufferize> {
  void runOnOperation() override {
    namespace bufferization = mlir::bufferization;
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(bufferization::LayoutMapOption::IdentityLayoutMap);
    options.memCpyFn = [](mlir::OpBuilder &builder, mlir::Location loc, mlir::Value from,
                          mlir::Value to) {
      mlir::linalg::CopyOp::create(builder, loc, from, to);
      return mlir::success();
    };
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(getOperation(), options, state)))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
