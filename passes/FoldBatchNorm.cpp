// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- FoldBatchNorm.cpp - BatchNormalization into the Conv before it -----===//
//
// At inference a batch normalization is a per-channel affine map,
//
//   y = (x - mean) * s + bias,   s = scale / sqrt(variance + epsilon),
//
// so after a convolution whose only user it is, it folds into new weights
// and bias: W'[c] = W[c] * s[c] and b'[c] = (b[c] - mean[c]) * s[c] + bias[c].
// The folded convolution carries both nodes' locations. After a Gemm the
// channels are its output columns, and the fold reaches B and C the same way.
//
//===----------------------------------------------------------------------===//

#include "passes/Matching.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {

#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// A normalization's affine map per channel, y = x * s + t, from constant
/// f32 statistics of `channels` entries each.
struct ChannelAffine {
  std::vector<float> s, t;
};

std::optional<ChannelAffine> channelAffine(BatchNormOp norm, int64_t channels) {
  std::optional<std::vector<float>> scale = constantF32(norm.getScale()),
                                    shift = constantF32(norm.getBias()),
                                    mean = constantF32(norm.getMean()),
                                    variance = constantF32(norm.getVariance());
  if (!scale || !shift || !mean || !variance)
    return std::nullopt;
  for (const std::vector<float> *v : {&*scale, &*shift, &*mean, &*variance})
    if (int64_t(v->size()) != channels)
      return std::nullopt;
  float epsilon = norm.getEpsilon().convertToFloat();
  ChannelAffine affine{std::vector<float>(channels), std::vector<float>(channels)};
  for (int64_t c = 0; c < channels; ++c) {
    affine.s[c] = (*scale)[c] / std::sqrt((*variance)[c] + epsilon);
    affine.t[c] = (*shift)[c] - (*mean)[c] * affine.s[c];
  }
  return affine;
}

struct FoldIntoConv : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp norm, PatternRewriter &rewriter) const override {
    auto conv = norm.getInput().getDefiningOp<ConvOp>();
    if (!conv)
      return rewriter.notifyMatchFailure(norm, "not after a convolution");
    if (!conv->hasOneUse())
      return rewriter.notifyMatchFailure(norm, "the convolution has other users");
    auto weightType = conv.getWeight().getType();
    int64_t channels = weightType.getDimSize(0);
    std::optional<std::vector<float>> weight = constantF32(conv.getWeight());
    std::optional<std::vector<float>> bias =
        conv.getBias() ? constantF32(conv.getBias()) : std::vector<float>(channels, 0.0f);
    std::optional<ChannelAffine> affine = channelAffine(norm, channels);
    if (!weight || !bias || int64_t(bias->size()) != channels || !affine)
      return rewriter.notifyMatchFailure(norm,
                                         "needs f32 constant weights and per-channel statistics");

    // b' = b * s + t, which is (b - mean) * s + shift.
    size_t perChannel = weight->size() / size_t(channels);
    std::vector<float> newBias(channels);
    for (int64_t c = 0; c < channels; ++c) {
      for (size_t i = 0; i < perChannel; ++i)
        (*weight)[c * perChannel + i] *= affine->s[c];
      newBias[c] = (*bias)[c] * affine->s[c] + affine->t[c];
    }

    Location loc = rewriter.getFusedLoc({conv.getLoc(), norm.getLoc()});
    auto weightValue = conv.getWeight().getDefiningOp<ConstantOp>().getValue();
    std::string name = derivedName(weightValue, "folded");
    Value newWeight = ConstantOp::create(rewriter, loc, makeF32(weightType, *weight, name));
    auto biasType = RankedTensorType::get({channels}, rewriter.getF32Type());
    Value biasValue = ConstantOp::create(rewriter, loc, makeF32(biasType, newBias, name + ".bias"));
    OperationState state(loc, conv->getName());
    state.addOperands({conv.getInput(), newWeight, biasValue});
    state.addAttributes(conv->getAttrs());
    state.addTypes(norm.getType());
    Operation *folded = rewriter.create(state);
    rewriter.replaceOp(norm, folded->getResults());
    rewriter.eraseOp(conv);
    return success();
  }
};

/// After Gemm, Y = alpha * A B + beta * C over [M, N], the normalization's
/// channels are the N columns: B's column n (its row, when transposed) is
/// scaled by s[n], and C becomes (beta * C - mean) * s + shift with beta 1.
/// C must not vary along M.
struct FoldIntoGemm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp norm, PatternRewriter &rewriter) const override {
    auto gemm = norm.getInput().getDefiningOp<GemmOp>();
    if (!gemm)
      return rewriter.notifyMatchFailure(norm, "not after a Gemm");
    if (!gemm->hasOneUse())
      return rewriter.notifyMatchFailure(norm, "the Gemm has other users");
    int64_t columns = gemm.getType().getDimSize(1);
    auto bType = gemm.getB().getType();
    std::optional<std::vector<float>> b = constantF32(gemm.getB());
    std::optional<ChannelAffine> affine = channelAffine(norm, columns);
    if (!b || !affine)
      return rewriter.notifyMatchFailure(norm,
                                         "needs f32 constant weights and per-column statistics");
    // C, per column: absent, a scalar, [N] or [1, N].
    std::vector<float> c(columns, 0.0f);
    if (Value cValue = gemm.getC()) {
      auto cType = cast<RankedTensorType>(cValue.getType());
      std::optional<std::vector<float>> values = constantF32(cValue);
      bool perColumn = cType.getNumElements() == columns &&
                       (cType.getRank() == 1 || (cType.getRank() == 2 && cType.getDimSize(0) == 1));
      if (!values || !(perColumn || cType.getNumElements() == 1))
        return rewriter.notifyMatchFailure(norm, "C must be a constant that does not vary by row");
      for (int64_t n = 0; n < columns; ++n)
        c[n] = (*values)[perColumn ? n : 0];
    }

    float beta = gemm.getBeta().convertToFloat();
    int64_t rows = bType.getDimSize(0), inner = bType.getDimSize(1);
    std::vector<float> newC(columns);
    for (int64_t n = 0; n < columns; ++n) {
      float s = affine->s[n];
      newC[n] = beta * c[n] * s + affine->t[n];
      if (gemm.getTransB()) // B is [N, K]: row n.
        for (int64_t k = 0; k < inner; ++k)
          (*b)[n * inner + k] *= s;
      else // B is [K, N]: column n.
        for (int64_t k = 0; k < rows; ++k)
          (*b)[k * inner + n] *= s;
    }

    Location loc = rewriter.getFusedLoc({gemm.getLoc(), norm.getLoc()});
    Value newB = ConstantOp::create(rewriter, loc, makeF32(bType, *b, "gemm.folded"));
    auto cType = RankedTensorType::get({columns}, rewriter.getF32Type());
    Value cValue = ConstantOp::create(rewriter, loc, makeF32(cType, newC, "gemm.folded.bias"));
    OperationState state(loc, gemm->getName());
    state.addOperands({gemm.getA(), newB, cValue});
    NamedAttrList attributes(gemm->getAttrs());
    attributes.set("beta", rewriter.getF32FloatAttr(1.0f));
    state.addAttributes(attributes);
    state.addTypes(norm.getType());
    Operation *folded = rewriter.create(state);
    rewriter.replaceOp(norm, folded->getResults());
    rewriter.eraseOp(gemm);
    return success();
  }
};

struct FoldBatchNorm : impl::FoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConv, FoldIntoGemm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
