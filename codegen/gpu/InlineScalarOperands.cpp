// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- InlineScalarOperands.cpp - one-element tensors read as scalars -----===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_INLINESCALAROPERANDS
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

/// The scalar `operand` of `generic` always reads: the element of a
/// one-element from_elements, read at a constant index.
Value scalarOf(linalg::GenericOp generic, OpOperand &operand) {
  auto elements = operand.get().getDefiningOp<tensor::FromElementsOp>();
  if (!elements || elements.getElements().size() != 1)
    return {};
  AffineMap map = generic.getMatchingIndexingMap(&operand);
  if (!llvm::all_of(map.getResults(), [](AffineExpr e) { return isa<AffineConstantExpr>(e); }))
    return {};
  return elements.getElements().front();
}

struct InlineScalarOperands : impl::InlineScalarOperandsBase<InlineScalarOperands> {
  void runOnOperation() override {
    bool changed = false;
    getOperation().walk([&](linalg::GenericOp generic) {
      for (OpOperand *input : generic.getDpsInputOperands())
        if (Value scalar = scalarOf(generic, *input)) {
          generic.getMatchingBlockArgument(input).replaceAllUsesWith(scalar);
          changed = true;
        }
    });
    if (!changed)
      return;
    // The inputs no body reads go, and the tensors no one reads with them.
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    tensor::FromElementsOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
