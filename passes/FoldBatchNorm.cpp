//===- FoldBatchNorm.cpp - BatchNormalization into the Conv before it -----===//
//
// At inference a batch normalization is a per-channel affine map,
//
//   y = (x - mean) * s + bias,   s = scale / sqrt(variance + epsilon),
//
// so after a convolution whose only user it is, it folds into new weights
// and bias: W'[c] = W[c] * s[c] and b'[c] = (b[c] - mean[c]) * s[c] + bias[c].
// The folded convolution carries both nodes' locations.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Weights.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {

#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// The f32 values of `value` when a kiln.constant defines it.
std::optional<std::vector<float>> constantF32(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  return readF32(constant.getValue());
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
    std::optional<std::vector<float>> scale = constantF32(norm.getScale()),
                                      shift = constantF32(norm.getBias()),
                                      mean = constantF32(norm.getMean()),
                                      variance = constantF32(norm.getVariance());
    if (!weight || !bias || !scale || !shift || !mean || !variance)
      return rewriter.notifyMatchFailure(norm, "needs f32 constant weights and statistics");
    for (const std::vector<float> *v : {&*bias, &*scale, &*shift, &*mean, &*variance})
      if (int64_t(v->size()) != channels)
        return rewriter.notifyMatchFailure(norm, "statistics per channel expected");

    float epsilon = norm.getEpsilon().convertToFloat();
    size_t perChannel = weight->size() / size_t(channels);
    std::vector<float> newBias(channels);
    for (int64_t c = 0; c < channels; ++c) {
      float s = (*scale)[c] / std::sqrt((*variance)[c] + epsilon);
      for (size_t i = 0; i < perChannel; ++i)
        (*weight)[c * perChannel + i] *= s;
      newBias[c] = ((*bias)[c] - (*mean)[c]) * s + (*shift)[c];
    }

    Location loc = rewriter.getFusedLoc({conv.getLoc(), norm.getLoc()});
    auto weightValue = conv.getWeight().getDefiningOp<ConstantOp>().getValue();
    std::string name = "folded";
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(weightValue))
      name = (resource.getRawHandle().getKey() + ".folded").str();
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

struct FoldBatchNorm : impl::FoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConv>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
