// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- AssignLayout.cpp - NHWC for convolution-heavy graphs ---------------===//
//
// Tensor cores read a convolution as an implicit GEMM whose reduction runs
// over (window, channel): in NHWC the channels of each pixel are contiguous,
// so a tile of the reduction is one contiguous load. Here every 2-D-or-more
// convolution of one group, every depthwise one (a window per output, whose
// neighbouring threads then read neighbouring channels) and every pooling
// becomes its channels-last form between two transposes, its weights
// transposed once at compile time; then the transposes sink through the
// elementwise ops between them and cancel in pairs, so the layout changes
// only where something needs NCHW: the graph's inputs and outputs, and ops
// without a channels-last form.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Weights.h"
#include "passes/Matching.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_ASSIGNLAYOUT
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// The permutation moving dimension 1 of a rank-`rank` tensor last, and its
/// inverse.
SmallVector<int64_t> toChannelsLast(int64_t rank) {
  SmallVector<int64_t> perm = {0};
  llvm::append_range(perm, llvm::seq<int64_t>(2, rank));
  perm.push_back(1);
  return perm;
}
SmallVector<int64_t> toChannelsFirst(int64_t rank) {
  SmallVector<int64_t> perm = {0, rank - 1};
  llvm::append_range(perm, llvm::seq<int64_t>(1, rank - 1));
  return perm;
}

Value transpose(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> perm) {
  return TransposeOp::create(b, loc, value, b.getDenseI64ArrayAttr(perm));
}

/// `value` transposed by `perm`, a constant transposed now when it is one.
Value transposeWeight(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> perm) {
  auto constant = value.getDefiningOp<ConstantOp>();
  std::optional<std::vector<float>> values = constant ? readF32(constant.getValue()) : std::nullopt;
  if (!values)
    return transpose(b, loc, value, perm);
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> newShape, strides(shape.size(), 1);
  for (int64_t d : perm)
    newShape.push_back(shape[d]);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  std::vector<float> moved(values->size());
  SmallVector<int64_t> at(shape.size(), 0);
  for (size_t flat = 0; flat < moved.size(); ++flat) {
    int64_t source = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      source += at[d] * strides[perm[d]];
    moved[flat] = (*values)[source];
    for (int64_t d = int64_t(at.size()) - 1; d >= 0 && ++at[d] == newShape[d]; --d)
      at[d] = 0;
  }
  return ConstantOp::create(
      b, constant.getLoc(),
      makeF32(type.clone(newShape), moved, derivedName(constant.getValue(), "channels_last")));
}

/// Rebuilds `op` channels last: `operands` are the new ones, its result is
/// transposed back for its users.
void rebuildChannelsLast(RewriterBase &rewriter, Operation *op, ValueRange operands) {
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  state.addAttribute("channels_last", rewriter.getUnitAttr());
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  state.addTypes(channelsLast(type));
  Operation *last = rewriter.create(state);
  rewriter.replaceOp(
      op, transpose(rewriter, op->getLoc(), last->getResult(0), toChannelsFirst(type.getRank())));
}

/// U(transpose(x)) -> transpose(U(x)) for an elementwise op of one operand.
struct SinkThroughUnary : RewritePattern {
  SinkThroughUnary(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() ||
        !op->hasTrait<OpTrait::SameOperandsAndResultType>())
      return failure();
    auto moved = op->getOperand(0).getDefiningOp<TransposeOp>();
    if (!moved || !moved->hasOneUse())
      return rewriter.notifyMatchFailure(op, "not after a transpose used only here");
    Operation *inner = rewriter.clone(*op);
    inner->setOperand(0, moved.getInput());
    inner->getResult(0).setType(moved.getInput().getType());
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(), inner->getResult(0), moved.getPerm()));
    return success();
  }
};

/// B(transpose(x), transpose(y)) -> transpose(B(x, y)) for an elementwise op
/// of two operands of one shape, transposed alike.
template <typename OpT> struct SinkThroughBinary : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    auto lhs = op->getOperand(0).template getDefiningOp<TransposeOp>();
    auto rhs = op->getOperand(1).template getDefiningOp<TransposeOp>();
    if (!lhs || !rhs || lhs.getPerm() != rhs.getPerm() ||
        lhs.getInput().getType() != rhs.getInput().getType() ||
        op->getOperand(0).getType() != op->getResult(0).getType())
      return rewriter.notifyMatchFailure(op, "operands not transposed alike");
    auto inner = OpT::create(rewriter, op.getLoc(), lhs.getInput(), rhs.getInput());
    inner->setAttrs(op->getAttrs());
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), inner, lhs.getPerm()));
    if (lhs->use_empty())
      rewriter.eraseOp(lhs);
    if (rhs != lhs && rhs->use_empty())
      rewriter.eraseOp(rhs);
    return success();
  }
};

struct AssignLayout : impl::AssignLayoutBase<AssignLayout> {
  using AssignLayoutBase::AssignLayoutBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (layout == "nchw")
      return;
    if (layout != "nhwc") {
      module.emitError("unknown layout '") << layout << "': expected nchw or nhwc";
      return signalPassFailure();
    }
    SmallVector<Operation *> work;
    module.walk([&](Operation *op) {
      if (op->hasAttr("channels_last"))
        return;
      if (auto conv = dyn_cast<ConvOp>(op); conv && (conv.getGroup() == 1 || conv.isDepthwise()))
        work.push_back(op);
      else if (isa<MaxPoolOp, AveragePoolOp, GlobalAveragePoolOp>(op))
        work.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : work) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
      SmallVector<Value> operands = {
          transpose(rewriter, loc, op->getOperand(0), toChannelsLast(rank))};
      if (auto conv = dyn_cast<ConvOp>(op)) {
        // M x C x K1..Kk becomes K1..Kk x C x M.
        auto perm = llvm::to_vector(llvm::seq<int64_t>(2, rank));
        perm.append({1, 0});
        operands.push_back(transposeWeight(rewriter, loc, conv.getWeight(), perm));
        if (Value bias = conv.getBias())
          operands.push_back(bias);
      }
      rebuildChannelsLast(rewriter, op, operands);
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkThroughUnary, SinkThroughBinary<AddOp>, SinkThroughBinary<SubOp>,
                 SinkThroughBinary<MulOp>, SinkThroughBinary<DivOp>>(&getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
