// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- FuseElementwise.cpp - elementwise chains become one kernel ---------===//
//
// After the kernel generators, each elementwise op is its own linalg.generic
// and its own pass over memory. Here an elementwise generic whose result
// feeds only another elementwise generic is merged into it (MLIR's
// elementwise fusion, with kiln's rule for when): both must be all-parallel,
// so a product or a reduction is never fused into (that would bury the
// im2col gather inside the product the host tiles), and the producer must
// have no other user, so nothing is computed twice. For the same reason a
// producer with loops in its body (pooling, a depthwise convolution, a
// row's statistics) is fused only where the consumer reads each of its
// elements once. A fused body holds at most 256 ops (max-body-ops), which
// keeps fusing a long chain linear in its length.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

bool isParallelGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == generic.getNumParallelLoops();
}

/// A producer whose body loops (pooling, a depthwise convolution, a row's
/// statistics) reduces in disguise: fused into a consumer that broadcasts
/// its result, the loops would run once per element of the consumer.
bool hasLoops(Operation *op) {
  return op
      ->walk([&](Operation *inner) {
        return inner != op && inner->getNumRegions() > 0 ? WalkResult::interrupt()
                                                         : WalkResult::advance();
      })
      .wasInterrupted();
}

size_t bodyOps(Operation *op) {
  return cast<linalg::GenericOp>(op).getBody()->getOperations().size();
}

/// Whether the producer of `operand` (of an elementwise generic) joins it,
/// the fused body holding at most `maxBodyOps` ops. A kernel is
/// compute-bound long before the default 256 (a GELU is 20), and fusing
/// each op of a long chain into a body that holds all before it would cost
/// time quadratic in the chain: a chain of 100,000 Relus becomes a kernel
/// per 256.
bool shouldFuse(OpOperand &operand, unsigned maxBodyOps) {
  Operation *producer = operand.get().getDefiningOp();
  auto consumer = cast<linalg::GenericOp>(operand.getOwner());
  return isParallelGeneric(producer) && operand.get().hasOneUse() &&
         bodyOps(producer) + bodyOps(consumer) <= maxBodyOps &&
         (!hasLoops(producer) || consumer.getMatchingIndexingMap(&operand).isPermutation());
}

/// MLIR's elementwise fusion, whose result keeps the locations of both ops
/// (the ONNX nodes `kiln inspect` names for each kernel) and the producer's
/// layout.
struct FuseIntoConsumer : OpRewritePattern<linalg::GenericOp> {
  FuseIntoConsumer(MLIRContext *context, unsigned maxBodyOps)
      : OpRewritePattern(context), maxBodyOps(maxBodyOps) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!isParallelGeneric(consumer.getOperation()))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!linalg::areElementwiseOpsFusable(&operand) || !shouldFuse(operand, maxBodyOps))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      fused->fusedOp->setLoc(rewriter.getFusedLoc({producer->getLoc(), consumer.getLoc()}));
      // A pooling's or depthwise convolution's layout, for the kernel list.
      if (Attribute layout = producer->getAttr(kLayoutAttr))
        fused->fusedOp->setAttr(kLayoutAttr, layout);
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          return use.get().getDefiningOp() != producer;
        });
      rewriter.eraseOp(consumer);
      return success();
    }
    return failure();
  }

  unsigned maxBodyOps;
};

struct FuseElementwise : impl::FuseElementwiseBase<FuseElementwise> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Upstream's clean-ups (fills and splat constants folded into bodies,
    // unused operands erased), with its fusion left to FuseIntoConsumer.
    linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *) { return false; });
    patterns.add<FuseIntoConsumer>(&getContext(), maxBodyOps);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
