//===- Reduction.cpp - reductions, normalizations and pooling -------------===//

#include "codegen/kernels/Builders.h"
#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

template <typename OpT, ReduceKind kind>
struct ReduceToLinalg : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Type element = op.getType().getElementType();
    if (!isa<FloatType>(element) && !element.isSignlessInteger())
      return rewriter.notifyMatchFailure(op, "element type without a kernel");
    rewriter.replaceOp(op, reduce(rewriter, op.getLoc(), op.getInput(), op.getAxes(),
                                  op.getKeepdims(), kind));
    return success();
  }
};


/// Softmax: exp(x - max) / sum(exp(x - max)) along the axis.
struct SoftmaxToLinalg : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t axis = int64_t(op.getAxis());
    Value max = reduce(rewriter, loc, op.getInput(), {axis}, true, ReduceKind::Max);
    Value exp = elementwise(rewriter, loc, type, ValueRange{op.getInput(), max},
                            [](OpBuilder &b, Location l, ValueRange args) -> Value {
                              return math::ExpOp::create(
                                  b, l, arith::SubFOp::create(b, l, args[0], args[1]));
                            });
    Value sum = reduce(rewriter, loc, exp, {axis}, true, ReduceKind::Sum);
    rewriter.replaceOp(op, elementwise(rewriter, loc, type, ValueRange{exp, sum},
                                       [](OpBuilder &b, Location l, ValueRange args) -> Value {
                                         return arith::DivFOp::create(b, l, args[0], args[1]);
                                       }));
    return success();
  }
};

/// LayerNormalization: (x - mean) / sqrt(var + eps) * scale + bias over the
/// dimensions from `axis` on, with the variance of the centered values.
struct LayerNormToLinalg : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto axes = llvm::to_vector(llvm::seq<int64_t>(int64_t(op.getAxis()), type.getRank()));
    Value mean = reduce(rewriter, loc, op.getInput(), axes, true, ReduceKind::Mean);
    Value centered = elementwise(rewriter, loc, type, ValueRange{op.getInput(), mean},
                                 [](OpBuilder &b, Location l, ValueRange args) -> Value {
                                   return arith::SubFOp::create(b, l, args[0], args[1]);
                                 });
    Value squares = elementwise(rewriter, loc, type, ValueRange{centered},
                                [](OpBuilder &b, Location l, ValueRange args) -> Value {
                                  return arith::MulFOp::create(b, l, args[0], args[0]);
                                });
    Value variance = reduce(rewriter, loc, squares, axes, true, ReduceKind::Mean);
    double epsilon = op.getEpsilon().convertToDouble();
    SmallVector<Value> operands = {centered, variance, op.getScale()};
    if (op.getBias())
      operands.push_back(op.getBias());
    rewriter.replaceOp(
        op, elementwise(rewriter, loc, type, operands,
                        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                          Type t = args[0].getType();
                          Value std = math::SqrtOp::create(
                              b, l, arith::AddFOp::create(b, l, args[1], scalar(b, l, t, epsilon)));
                          Value normalized = arith::DivFOp::create(b, l, args[0], std);
                          Value scaled = arith::MulFOp::create(b, l, normalized, args[2]);
                          if (args.size() > 3)
                            return arith::AddFOp::create(b, l, scaled, args[3]);
                          return scaled;
                        }));
    return success();
  }
};

/// The window of a pooling kernel, per spatial dimension.
struct Window {
  ArrayRef<int64_t> kernel, strides, pads, dilations;
  bool countIncludePad = false;
  /// Channels last (N x D1..Dk x C) rather than N x C x D1..Dk.
  bool channelsLast = false;
};

/// Max or average pooling as one kernel: an all-parallel generic over the
/// output whose body loops over its window, reading only cells inside the
/// input (bounds are checked along dimensions some window overhangs,
/// padding or the ceil_mode overhang). An average divides by the cells it
/// counts: those inside the input, or inside input and declared padding
/// with count_include_pad.
Value pool(OpBuilder &b, Location loc, Value input, RankedTensorType type, const Window &w,
           bool isMax) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  int64_t rank = type.getRank(), spatial = rank - 2;
  // The first spatial dimension, in the input and the output.
  int64_t first = w.channelsLast ? 1 : 2;
  TypedAttr identity = isMax ? lowestValue(element) : cast<TypedAttr>(b.getZeroAttr(element));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto body = [&](OpBuilder &nested, Location l, ValueRange) {
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(nested, l, value);
    };
    SmallVector<Value> outputAt;
    for (int64_t d = 0; d < rank; ++d)
      outputAt.push_back(linalg::IndexOp::create(nested, l, d));
    Value one = scalar(nested, l, element, 1.0);
    SmallVector<Value> offsets(spatial);
    // One loop per window dimension, carrying the running result and count.
    std::function<SmallVector<Value>(OpBuilder &, int64_t, ValueRange)> level =
        [&](OpBuilder &lb, int64_t i, ValueRange carried) -> SmallVector<Value> {
      if (i < spatial) {
        auto loop = scf::ForOp::create(
            lb, l, index(0), index(w.kernel[i]), index(1), carried,
            [&](OpBuilder &inner, Location, Value k, ValueRange current) {
              offsets[i] = k;
              scf::YieldOp::create(inner, l, level(inner, i + 1, current));
            });
        return loop.getResults();
      }
      SmallVector<Value> at = {outputAt[0]};
      if (!w.channelsLast)
        at.push_back(outputAt[1]);
      Value inside, counted;
      for (int64_t d = 0; d < spatial; ++d) {
        int64_t size = inputType.getDimSize(d + first);
        Value position = arith::AddIOp::create(
            lb, l, arith::MulIOp::create(lb, l, outputAt[d + first], index(w.strides[d])),
            arith::MulIOp::create(lb, l, offsets[d], index(w.dilations[d])));
        position = arith::SubIOp::create(lb, l, position, index(w.pads[d]));
        int64_t last = (type.getDimSize(d + first) - 1) * w.strides[d] +
                       (w.kernel[d] - 1) * w.dilations[d] - w.pads[d];
        auto within = [&](int64_t low, int64_t high) -> Value {
          Value above = arith::CmpIOp::create(lb, l, arith::CmpIPredicate::sge, position, index(low));
          Value below = arith::CmpIOp::create(lb, l, arith::CmpIPredicate::slt, position, index(high));
          return arith::AndIOp::create(lb, l, above, below);
        };
        auto both = [&](Value all, Value next) -> Value {
          return all ? arith::AndIOp::create(lb, l, all, next).getResult() : next;
        };
        if (w.pads[d] > 0 || last >= size) {
          Value ok = within(0, size);
          inside = both(inside, ok);
          position = arith::SelectOp::create(lb, l, ok, position, index(0));
          if (!isMax && w.countIncludePad)
            counted = both(counted, within(-w.pads[d], size + w.pads[d + spatial]));
        }
        at.push_back(position);
      }
      if (w.channelsLast)
        at.push_back(outputAt[rank - 1]);
      if (!w.countIncludePad)
        counted = inside;
      Value value = tensor::ExtractOp::create(lb, l, input, at);
      Value combined = isMax ? arith::MaximumFOp::create(lb, l, carried[0], value).getResult()
                             : arith::AddFOp::create(lb, l, carried[0], value).getResult();
      if (inside)
        combined = arith::SelectOp::create(lb, l, inside, combined, carried[0]);
      if (isMax)
        return {combined};
      Value count = arith::AddFOp::create(lb, l, carried[1], one);
      if (counted)
        count = arith::SelectOp::create(lb, l, counted, count, carried[1]);
      return {combined, count};
    };
    SmallVector<Value> start = {arith::ConstantOp::create(nested, l, identity)};
    if (!isMax)
      start.push_back(scalar(nested, l, element, 0.0));
    SmallVector<Value> result = level(nested, 0, start);
    Value pooled = result[0];
    if (!isMax)
      pooled = arith::DivFOp::create(nested, l, pooled,
                                     arith::MaximumFOp::create(nested, l, result[1], one));
    linalg::YieldOp::create(nested, l, pooled);
  };
  auto pooled = linalg::GenericOp::create(b, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
                                          ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)},
                                          iterators, body);
  pooled->setAttr(kLayoutAttr, b.getStringAttr(w.channelsLast ? "nhwc" : "nchw"));
  return pooled.getResult(0);
}

template <typename OpT, bool isMax>
struct PoolToLinalg : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(op.getType().getElementType()))
      return rewriter.notifyMatchFailure(op, "pooling is generated for floats only");
    Window window{op.getKernelShape(), op.getStrides(), op.getPads(), op.getDilations()};
    if constexpr (!isMax)
      window.countIncludePad = op.getCountIncludePad();
    window.channelsLast = op.getChannelsLast();
    rewriter.replaceOp(op, pool(rewriter, op.getLoc(), op.getInput(), op.getType(), window, isMax));
    return success();
  }
};

/// GlobalAveragePool: average pooling with the whole image as the window.
struct GlobalAveragePoolToLinalg : OpRewritePattern<GlobalAveragePoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GlobalAveragePoolOp op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(op.getType().getElementType()))
      return rewriter.notifyMatchFailure(op, "pooling is generated for floats only");
    ArrayRef<int64_t> shape = op.getInput().getType().getShape();
    ArrayRef<int64_t> image =
        op.getChannelsLast() ? shape.drop_front().drop_back() : shape.drop_front(2);
    SmallVector<int64_t> ones(image.size(), 1), zeros(2 * image.size(), 0);
    Window window{image, ones, zeros, ones};
    window.channelsLast = op.getChannelsLast();
    rewriter.replaceOp(op, pool(rewriter, op.getLoc(), op.getInput(), op.getType(), window,
                                /*isMax=*/false));
    return success();
  }
};

} // namespace

void populateReductionKernels(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ReduceToLinalg<ReduceSumOp, ReduceKind::Sum>,
               ReduceToLinalg<ReduceMaxOp, ReduceKind::Max>,
               ReduceToLinalg<ReduceMeanOp, ReduceKind::Mean>, GlobalAveragePoolToLinalg,
               SoftmaxToLinalg, LayerNormToLinalg, PoolToLinalg<MaxPoolOp, true>,
               PoolToLinalg<AveragePoolOp, false>>(context);
}

} // namespace kiln
