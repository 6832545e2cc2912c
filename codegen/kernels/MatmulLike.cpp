//===- MatmulLike.cpp - contractions as linalg ----------------------------===//

#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

/// A 2-D convolution: zero padding as tensor.pad, the bias broadcast into the
/// accumulator, then linalg.conv_2d_nchw_fchw accumulating onto it.
struct ConvToLinalg : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    if (type.getRank() != 4)
      return rewriter.notifyMatchFailure(op, "only 2-D convolutions have a kernel generator");
    if (op.getGroup() != 1)
      return rewriter.notifyMatchFailure(op, "grouped convolutions have no kernel generator yet");
    Location loc = op.getLoc();
    Type element = type.getElementType();

    Value input = op.getInput();
    ArrayRef<int64_t> pads = op.getPads();
    if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
      SmallVector<OpFoldResult> low = {rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(pads[0]), rewriter.getIndexAttr(pads[1])};
      SmallVector<OpFoldResult> high = {rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
                                        rewriter.getIndexAttr(pads[2]), rewriter.getIndexAttr(pads[3])};
      auto inputType = op.getInput().getType();
      SmallVector<int64_t> padded(inputType.getShape());
      padded[2] += pads[0] + pads[2];
      padded[3] += pads[1] + pads[3];
      Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
      input = tensor::PadOp::create(rewriter, loc, inputType.clone(padded), input,
                                    low, high, zero);
    }

    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
    if (Value bias = op.getBias()) {
      init = linalg::BroadcastOp::create(rewriter, loc, bias, init,
                                         ArrayRef<int64_t>{0, 2, 3})
                 ->getResult(0);
    } else {
      Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
      init = linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
    }

    auto vector2 = [&](ArrayRef<int64_t> values) {
      return DenseIntElementsAttr::get(
          RankedTensorType::get({2}, rewriter.getI64Type()), values);
    };
    auto conv = linalg::Conv2DNchwFchwOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{input, op.getWeight()},
        ValueRange{init}, vector2(op.getStrides()), vector2(op.getDilations()));
    rewriter.replaceOp(op, conv.getResults());
    return success();
  }
};

} // namespace

void populateMatmulLikeKernels(RewritePatternSet &patterns) {
  patterns.add<ConvToLinalg>(patterns.getContext());
}

} // namespace kiln
