// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- FuseLayerNorm.cpp - the decomposed LayerNormalization, whole -------===//
//
// Exporters below opset 17 write LayerNormalization out:
//
//   mean = ReduceMean(x, trailing axes)    d = x - mean
//   var  = ReduceMean(d ^ 2, same axes)    n = d / Sqrt(var + epsilon)
//   y    = n * gamma + beta                (the affine part is optional)
//
// Nine kernels and five passes over the activations; this pass turns each
// such chain into one kiln.layer_norm whose location fuses every node's.
// Every intermediate value must have no user outside the chain (d has
// exactly its two), so nothing is computed twice.
//
//===----------------------------------------------------------------------===//

#include "passes/Matching.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_FUSELAYERNORM
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// A scale or shift of the normalized values: broadcasting to the
/// normalized (trailing) dimensions only.
bool isAffineOperand(Value value, RankedTensorType input, int64_t axis) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  if (type.getElementType() != input.getElementType() ||
      type.getRank() > int64_t(normalized.size()))
    return false;
  ArrayRef<int64_t> tail = normalized.take_back(type.getRank());
  for (auto [dim, size] : llvm::zip(type.getShape(), tail))
    if (dim != size && dim != 1)
      return false;
  return true;
}

struct FuseDecomposed : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div, PatternRewriter &rewriter) const override {
    // n = d / sqrt(var + eps), d = x - mean.
    auto sub = div.getLhs().getDefiningOp<SubOp>();
    auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
    if (!sub || !sqrt)
      return failure();
    auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
    Value x = sub.getLhs();
    if (!mean || mean.getInput() != x || !mean.getKeepdims())
      return failure();
    auto type = cast<RankedTensorType>(x.getType());
    if (!type.getElementType().isF32() || div.getType() != type)
      return failure();
    ArrayRef<int64_t> axes = mean.getAxes();
    int64_t axis = type.getRank() - int64_t(axes.size());
    if (axes.empty() || !llvm::equal(axes, llvm::seq<int64_t>(axis, type.getRank())))
      return failure();

    auto add = sqrt.getInput().getDefiningOp<AddOp>();
    if (!add)
      return failure();
    auto variance = add.getLhs().getDefiningOp<ReduceMeanOp>();
    Value epsilonValue = add.getRhs();
    if (!variance) {
      variance = add.getRhs().getDefiningOp<ReduceMeanOp>();
      epsilonValue = add.getLhs();
    }
    std::optional<float> epsilon = splatF32(epsilonValue);
    if (!variance || !epsilon || variance.getAxes() != axes || !variance.getKeepdims() ||
        add.getType() != variance.getType())
      return failure();
    // The square: d ^ 2 or d * d.
    Operation *square = variance.getInput().getDefiningOp();
    Value d = sub.getResult();
    bool isSquare = false;
    if (auto pow = dyn_cast_or_null<PowOp>(square))
      isSquare = pow.getLhs() == d && splatF32(pow.getRhs()) == 2.0f;
    else if (auto mul = dyn_cast_or_null<MulOp>(square))
      isSquare = mul.getLhs() == d && mul.getRhs() == d;
    if (!isSquare)
      return failure();

    // Nothing in the chain may be used outside it.
    size_t dUses = llvm::range_size(d.getUses());
    if (!mean->hasOneUse() || dUses != (isa<MulOp>(square) ? 3u : 2u) || !square->hasOneUse() ||
        !variance->hasOneUse() || !add->hasOneUse() || !sqrt->hasOneUse())
      return failure();

    SmallVector<Location> locs = {mean.getLoc(), sub.getLoc(),  square->getLoc(), variance.getLoc(),
                                  add.getLoc(),  sqrt.getLoc(), div.getLoc()};
    // The optional affine part, each step only if it is the sole user.
    Operation *last = div;
    Value scale, shift;
    if (auto mul = dyn_cast_or_null<MulOp>(soleUser(div.getResult()))) {
      Value gamma = otherOperand(mul, div.getResult());
      if (gamma && gamma != div.getResult() && isAffineOperand(gamma, type, axis) &&
          mul.getType() == type) {
        scale = gamma;
        last = mul;
        locs.push_back(mul.getLoc());
        if (auto plus = dyn_cast_or_null<AddOp>(soleUser(mul.getResult()))) {
          Value beta = otherOperand(plus, mul.getResult());
          if (beta && beta != mul.getResult() && isAffineOperand(beta, type, axis) &&
              plus.getType() == type) {
            shift = beta;
            last = plus;
            locs.push_back(plus.getLoc());
          }
        }
      }
    }

    Location loc = rewriter.getFusedLoc(locs);
    if (!scale) {
      auto scaleType =
          RankedTensorType::get(type.getShape().drop_front(axis), type.getElementType());
      scale = ConstantOp::create(rewriter, loc, DenseElementsAttr::get(scaleType, 1.0f));
    }
    Value norm =
        LayerNormOp::create(rewriter, loc, x, scale, shift, rewriter.getI64IntegerAttr(axis),
                            rewriter.getF32FloatAttr(*epsilon));
    rewriter.replaceOp(last, norm);
    return success();
  }
};

struct FuseLayerNorm : impl::FuseLayerNormBase<FuseLayerNorm> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseDecomposed>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
