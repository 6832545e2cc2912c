// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- LowerToLinalg.cpp - kiln ops to linalg via the kernel generators ---===//

#include "codegen/kernels/Passes.h"

#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_LOWERTOLINALG
#include "codegen/kernels/Passes.h.inc"

namespace {

/// Weights become arith.constant, which bufferization places in memory; a
/// constant without elements is only a shape (no zero-byte weight).
struct ConstantToArith : mlir::OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(ConstantOp op,
                                      mlir::PatternRewriter &rewriter) const override {
    mlir::RankedTensorType type = op.getType();
    if (type.getNumElements() == 0) {
      rewriter.replaceOpWithNewOp<mlir::tensor::EmptyOp>(op, type.getShape(),
                                                         type.getElementType());
      return mlir::success();
    }
    rewriter.replaceOpWithNewOp<mlir::arith::ConstantOp>(
        op, op.getType(), mlir::cast<mlir::TypedAttr>(op.getValue()));
    return mlir::success();
  }
};

struct LowerToLinalg : impl::LowerToLinalgBase<LowerToLinalg> {
  void runOnOperation() override {
    mlir::MLIRContext *context = &getContext();
    // Symbolic dimensions go as far as the graph (--emit kiln, --emit
    // fused); kernels take static shapes.
    if (auto symbols = getOperation()->getAttrOfType<mlir::ArrayAttr>(kSymbolsAttr)) {
      mlir::InFlightDiagnostic error =
          getOperation().emitError("kiln generates kernels for static shapes only, and the model "
                                   "has symbolic dimensions (");
      for (auto [i, name] : llvm::enumerate(symbolNames(getOperation())))
        error << (i ? ", '" : "'") << name << "'";
      error << "): fix each input's with --input-shape NAME=D0xD1x...";
      return signalPassFailure();
    }
    eraseSignedness(getOperation());
    mlir::RewritePatternSet patterns(context);
    patterns.add<ConstantToArith>(context);
    populateMatmulLikeKernels(patterns);
    populateElementwiseKernels(patterns);
    populateReductionKernels(patterns);
    populateDataMovementKernels(patterns);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // Name every op that no generator handled, not only the first.
    bool missing = false;
    getOperation().walk([&](mlir::Operation *op) {
      if (op->getDialect() && mlir::isa<KilnDialect>(op->getDialect())) {
        op->emitError("no kernel generator handles this '") << op->getName() << "' yet";
        missing = true;
      }
    });
    if (missing)
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
