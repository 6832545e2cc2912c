//===- FuseElementwise.cpp - elementwise chains become one kernel ---------===//
//
// After the kernel generators, each elementwise op is its own linalg.generic
// and its own pass over memory. Here an elementwise generic whose result
// feeds only another elementwise generic is merged into it (MLIR's
// elementwise fusion, with kiln's rule for when): both must be all-parallel,
// so a product or a reduction is never fused into (that would bury the
// im2col gather inside the product the host tiles), and the producer must
// have no other user and no loops in its body (pooling, a row's statistics),
// so nothing is computed twice.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

bool isElementwise(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == generic.getNumParallelLoops();
}

/// A producer whose body loops (pooling, a row's statistics) reduces in
/// disguise: fused into a consumer that broadcasts its result, the loops
/// would run once per element of the consumer.
bool hasLoops(Operation *op) {
  return op->walk([&](Operation *inner) {
             return inner != op && inner->getNumRegions() > 0 ? WalkResult::interrupt()
                                                             : WalkResult::advance();
           })
      .wasInterrupted();
}

struct FuseElementwise : impl::FuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      return isElementwise(producer) && !hasLoops(producer) &&
             isElementwise(operand->getOwner()) && operand->get().hasOneUse();
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
