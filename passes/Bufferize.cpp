//===- Bufferize.cpp - One-Shot bufferization with linalg copies ----------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

#define GEN_PASS_DEF_BUFFERIZE
#include "passes/Passes.h.inc"

namespace {

/// Whether `a` and `b` are the same memory: one value, or the same slice of
/// one buffer.
bool sameMemory(mlir::Value a, mlir::Value b) {
  if (a == b)
    return true;
  auto sliceA = a.getDefiningOp<mlir::memref::SubViewOp>();
  auto sliceB = b.getDefiningOp<mlir::memref::SubViewOp>();
  return sliceA && sliceB && sliceA.getSource() == sliceB.getSource() &&
         sliceA.getType() == sliceB.getType() &&
         mlir::isEqualConstantIntOrValueArray(sliceA.getMixedOffsets(), sliceB.getMixedOffsets()) &&
         mlir::isEqualConstantIntOrValueArray(sliceA.getMixedSizes(), sliceB.getMixedSizes()) &&
         mlir::isEqualConstantIntOrValueArray(sliceA.getMixedStrides(), sliceB.getMixedStrides());
}

/// Erases the copies of a slice onto itself that bufferizing leaves where a
/// producer already wrote into its concatenation's slice, and the slices
/// only they used.
void eraseSelfCopies(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::linalg::CopyOp> copies;
  module.walk([&](mlir::linalg::CopyOp copy) {
    if (copy.hasPureBufferSemantics() && sameMemory(copy.getDpsInputs()[0], copy.getDpsInits()[0]))
      copies.push_back(copy);
  });
  for (mlir::linalg::CopyOp copy : copies) {
    llvm::SmallVector<mlir::Value> operands = {copy.getDpsInputs()[0], copy.getDpsInits()[0]};
    copy.erase();
    for (mlir::Value operand : operands)
      if (auto slice = operand.getDefiningOp<mlir::memref::SubViewOp>();
          slice && slice->use_empty())
        slice.erase();
  }
}

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
    // A result inserted into a slice of a tensor (a Concat's input) is
    // computed in that slice where the analysis allows: no buffer of its
    // own, no copy.
    mlir::IRRewriter rewriter(&getContext());
    if (failed(bufferization::eliminateEmptyTensors(rewriter, getOperation())))
      return signalPassFailure();
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(getOperation(), options, state)))
      return signalPassFailure();
    eraseSelfCopies(getOperation());
  }
};

} // namespace
} // namespace kiln
