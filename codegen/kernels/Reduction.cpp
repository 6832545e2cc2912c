// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Reduction.cpp - reductions, normalizations and pooling -------------===//

#include "codegen/kernels/Builders.h"
#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace kiln {
namespace {

template <typename OpT, ReduceKind kind> struct ReduceToLinalg : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Type element = op.getType().getElementType();
    if (!isa<FloatType>(element) && !element.isSignlessInteger())
      return rewriter.notifyMatchFailure(op, "element type without a kernel");
    rewriter.replaceOp(op, reduce(rewriter, op.getLoc(), op.getInput(), op.getAxes(),
                                  op.getKeepdims(), kind, unsignedOperand(op, 0)));
    return success();
  }
};

/// Loops over dimensions `axes` of `input` from position `at` (whose
/// entries for `axes` the loops replace), carrying `init`: `step` gets each
/// element and the carried values and returns the new ones.
SmallVector<Value> overRow(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
                           SmallVector<Value> at, ValueRange init,
                           function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> step) {
  if (axes.empty())
    return step(b, tensor::ExtractOp::create(b, loc, input, at), init);
  auto type = cast<RankedTensorType>(input.getType());
  auto zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto one = arith::ConstantIndexOp::create(b, loc, 1);
  Value extent = dimSize(b, loc, input, axes.front());
  auto loop = scf::ForOp::create(
      b, loc, zero, extent, one, init,
      [&](OpBuilder &inner, Location, Value i, ValueRange carried) {
        at[axes.front()] = i;
        scf::YieldOp::create(inner, loc,
                             overRow(inner, loc, input, axes.drop_front(), at, carried, step));
      });
  return loop.getResults();
}

/// Statistics of each row of `input` (its dimensions `axes`) as one kernel:
/// an all-parallel generic over the input's shape with `axes` of size 1,
/// each element looping over its row. `compute` gets the builder, the
/// row's position and returns one value per result.
SmallVector<Value>
rowStatistics(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes, unsigned results,
              function_ref<SmallVector<Value>(OpBuilder &, SmallVector<Value>)> compute) {
  auto type = cast<RankedTensorType>(input.getType());
  Dims dims = dimsOf(type);
  for (int64_t axis : axes)
    dims[axis] = getAffineConstantExpr(1, type.getContext());
  auto rowType = withDims(type, dims);
  SmallVector<Value> inits;
  for (unsigned i = 0; i < results; ++i)
    inits.push_back(emptyTensor(b, loc, rowType));
  SmallVector<AffineMap> maps(results, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  auto generic =
      linalg::GenericOp::create(b, loc, SmallVector<Type>(results, rowType), ValueRange{}, inits,
                                maps, iterators, [&](OpBuilder &nested, Location l, ValueRange) {
                                  SmallVector<Value> at = loopIndices(nested, l, type.getRank());
                                  linalg::YieldOp::create(nested, l, compute(nested, at));
                                });
  return generic.getResults();
}

/// ArgMax/ArgMin: one kernel over the rows, each element walking its row
/// from the first element, keeping the best value and its index. A NaN beats
/// every number, as in NumPy.
template <typename OpT, bool isMax> struct ArgReduceToLinalg : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type element = inputType.getElementType();
    if (!isa<FloatType>(element) && !element.isSignlessInteger())
      return rewriter.notifyMatchFailure(op, "element type without a kernel");
    int64_t axis = int64_t(op.getAxis()), rank = inputType.getRank();
    bool last = op.getSelectLastIndex();
    SmallVector<int64_t> rowShape(inputType.getShape());
    rowShape[axis] = 1;
    Type i64 = rewriter.getI64Type();
    auto rowType = RankedTensorType::get(rowShape, i64);
    Value init = tensor::EmptyOp::create(rewriter, loc, rowShape, i64);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto better = [&](OpBuilder &b, Value x, Value best) -> Value {
      if (auto floatType = dyn_cast<FloatType>(element)) {
        using P = arith::CmpFPredicate;
        Value wins = arith::CmpFOp::create(
            b, loc, isMax ? (last ? P::OGE : P::OGT) : (last ? P::OLE : P::OLT), x, best);
        Value xNaN = arith::CmpFOp::create(b, loc, P::UNO, x, x);
        if (!last) {
          Value bestNaN = arith::CmpFOp::create(b, loc, P::UNO, best, best);
          Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
          xNaN = arith::AndIOp::create(b, loc, xNaN, arith::XOrIOp::create(b, loc, bestNaN, one));
        }
        return arith::OrIOp::create(b, loc, wins, xNaN);
      }
      using P = arith::CmpIPredicate;
      if (unsignedOperand(op, 0))
        return arith::CmpIOp::create(
            b, loc, isMax ? (last ? P::uge : P::ugt) : (last ? P::ule : P::ult), x, best);
      return arith::CmpIOp::create(
          b, loc, isMax ? (last ? P::sge : P::sgt) : (last ? P::sle : P::slt), x, best);
    };
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{rowType}, ValueRange{}, ValueRange{init},
        rewriter.getMultiDimIdentityMap(rank), iterators,
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at = loopIndices(b, l, rank);
          Value first = tensor::ExtractOp::create(b, l, input, at);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          auto loop = scf::ForOp::create(
              b, l, arith::ConstantIndexOp::create(b, l, 1),
              arith::ConstantIndexOp::create(b, l, inputType.getDimSize(axis)),
              arith::ConstantIndexOp::create(b, l, 1), ValueRange{first, zero},
              [&](OpBuilder &inner, Location, Value i, ValueRange carried) {
                at[axis] = i;
                Value x = tensor::ExtractOp::create(inner, l, input, at);
                Value wins = better(inner, x, carried[0]);
                scf::YieldOp::create(
                    inner, l,
                    ValueRange{arith::SelectOp::create(inner, l, wins, x, carried[0]),
                               arith::SelectOp::create(inner, l, wins, i, carried[1])});
              });
          linalg::YieldOp::create(
              b, l, arith::IndexCastOp::create(b, l, i64, loop.getResult(1)).getResult());
        });
    Value result = generic.getResult(0);
    if (!op.getKeepdims())
      result = reshape(rewriter, loc, result, op.getType().getShape());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// CumSum: each element sums its prefix (or suffix) of the row in a loop.
struct CumSumToLinalg : OpRewritePattern<CumSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumSumOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    if (!isa<FloatType>(element) && !element.isSignlessInteger())
      return rewriter.notifyMatchFailure(op, "element type without a kernel");
    int64_t axis = int64_t(op.getAxis());
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    Value input = op.getInput();
    rewriter.replaceOp(
        op,
        elementwise(
            rewriter, loc, type, ValueRange{}, [&](OpBuilder &b, Location l, ValueRange) -> Value {
              SmallVector<Value> at = loopIndices(b, l, type.getRank());
              Value i = at[axis];
              Value one = arith::ConstantIndexOp::create(b, l, 1);
              Value n = arith::ConstantIndexOp::create(b, l, type.getDimSize(axis));
              Value zero = arith::ConstantIndexOp::create(b, l, 0);
              Value next = arith::AddIOp::create(b, l, i, one);
              Value lower = reverse ? (exclusive ? next : i) : zero;
              Value upper = reverse ? n : (exclusive ? i : next);
              auto loop = scf::ForOp::create(
                  b, l, lower, upper, one, ValueRange{scalar(b, l, element, 0.0)},
                  [&](OpBuilder &inner, Location, Value j, ValueRange carried) {
                    at[axis] = j;
                    Value x = tensor::ExtractOp::create(inner, l, input, at);
                    Value sum = isa<FloatType>(element)
                                    ? arith::AddFOp::create(inner, l, carried[0], x).getResult()
                                    : arith::AddIOp::create(inner, l, carried[0], x).getResult();
                    scf::YieldOp::create(inner, l, sum);
                  });
              return loop.getResult(0);
            }));
    return success();
  }
};

/// Softmax in two kernels: each row's maximum and sum of exp(x - max) in
/// one pass over the row each, then exp(x - max) / sum.
struct SoftmaxToLinalg : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    int64_t axis = op.getAxis();
    Value input = op.getInput();
    SmallVector<Value> stats =
        rowStatistics(rewriter, loc, input, {axis}, 2, [&](OpBuilder &b, SmallVector<Value> at) {
          Value lowest = arith::ConstantOp::create(b, loc, lowestValue(element));
          Value max = overRow(b, loc, input, {axis}, at, {lowest},
                              [&](OpBuilder &inner, Value x, ValueRange carried) {
                                return SmallVector<Value>{
                                    arith::MaximumFOp::create(inner, loc, carried[0], x)};
                              })[0];
          Value sum =
              overRow(b, loc, input, {axis}, at, {scalar(b, loc, element, 0.0)},
                      [&](OpBuilder &inner, Value x, ValueRange carried) {
                        Value e = math::ExpOp::create(inner, loc,
                                                      arith::SubFOp::create(inner, loc, x, max));
                        return SmallVector<Value>{arith::AddFOp::create(inner, loc, carried[0], e)};
                      })[0];
          return SmallVector<Value>{max, sum};
        });
    rewriter.replaceOp(op, elementwise(rewriter, loc, type, ValueRange{input, stats[0], stats[1]},
                                       [](OpBuilder &b, Location l, ValueRange args) -> Value {
                                         Value e = math::ExpOp::create(
                                             b, l, arith::SubFOp::create(b, l, args[0], args[1]));
                                         return arith::DivFOp::create(b, l, e, args[2]);
                                       }));
    return success();
  }
};

/// LayerNormalization in two kernels: each row's mean and sqrt(var + eps)
/// (the variance of the centered values), one pass over the row each,
/// then (x - mean) / std * scale + bias.
struct LayerNormToLinalg : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    auto axes = llvm::to_vector(llvm::seq<int64_t>(int64_t(op.getAxis()), type.getRank()));
    int64_t count = 1;
    for (int64_t axis : axes)
      count *= type.getDimSize(axis);
    Value input = op.getInput();
    double epsilon = op.getEpsilon().convertToDouble();
    SmallVector<Value> stats =
        rowStatistics(rewriter, loc, input, axes, 2, [&](OpBuilder &b, SmallVector<Value> at) {
          Value zero = scalar(b, loc, element, 0.0), n = scalar(b, loc, element, double(count));
          Value sum = overRow(
              b, loc, input, axes, at, {zero}, [&](OpBuilder &inner, Value x, ValueRange carried) {
                return SmallVector<Value>{arith::AddFOp::create(inner, loc, carried[0], x)};
              })[0];
          Value mean = arith::DivFOp::create(b, loc, sum, n);
          Value squares = overRow(
              b, loc, input, axes, at, {zero}, [&](OpBuilder &inner, Value x, ValueRange carried) {
                Value d = arith::SubFOp::create(inner, loc, x, mean);
                return SmallVector<Value>{math::FmaOp::create(inner, loc, d, d, carried[0])};
              })[0];
          Value variance = arith::DivFOp::create(b, loc, squares, n);
          Value std = math::SqrtOp::create(
              b, loc, arith::AddFOp::create(b, loc, variance, scalar(b, loc, element, epsilon)));
          return SmallVector<Value>{mean, std};
        });
    SmallVector<Value> operands = {input, stats[0], stats[1], op.getScale()};
    if (op.getBias())
      operands.push_back(op.getBias());
    rewriter.replaceOp(
        op, elementwise(rewriter, loc, type, operands,
                        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                          Value centered = arith::SubFOp::create(b, l, args[0], args[1]);
                          Value normalized = arith::DivFOp::create(b, l, centered, args[2]);
                          Value scaled = arith::MulFOp::create(b, l, normalized, args[3]);
                          if (args.size() > 4)
                            return arith::AddFOp::create(b, l, scaled, args[4]);
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
  // Whether some window overhangs the input (padding, or ceil_mode's
  // overhang): an average then counts its cells as it goes; otherwise it
  // divides by the window's size, and its loop carries the sum alone (the
  // form kiln-vectorize-row-loops runs on vectors).
  bool overhangs = false;
  for (int64_t d = 0; d < spatial; ++d)
    overhangs |= windowOverhangs(w.strides[d], w.dilations[d], w.pads[d], w.kernel[d],
                                 inputType.getDimSize(d + first), type.getDimSize(d + first));
  // The running result, and for an average that overhangs the cells
  // counted.
  SmallVector<TypedAttr> start = {isMax ? lowestValue(element)
                                        : cast<TypedAttr>(b.getZeroAttr(element))};
  if (!isMax && overhangs)
    start.push_back(b.getZeroAttr(element));
  // The input's sizes (computed before the kernel where a run gives them),
  // and with count_include_pad each padded size.
  SmallVector<OpFoldResult> sizes = mixedSizes(b, loc, inputType);
  SmallVector<OpFoldResult> image(ArrayRef<OpFoldResult>(sizes).slice(first, spatial));
  SmallVector<Value> padded;
  if (!isMax && w.countIncludePad)
    for (int64_t d = 0; d < spatial; ++d) {
      padded.push_back(
          arith::AddIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, image[d]),
                                arith::ConstantIndexOp::create(b, loc, w.pads[d + spatial])));
    }
  auto step = [&](OpBuilder &lb, Location l, ArrayRef<Value> outputAt, ArrayRef<Value> offsets,
                  ValueRange carried) -> SmallVector<Value> {
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(lb, l, value);
    };
    SmallVector<Value> at = {outputAt[0]};
    if (!w.channelsLast)
      at.push_back(outputAt[1]);
    Value inside, counted;
    for (int64_t d = 0; d < spatial; ++d) {
      WindowIndex read =
          windowIndex(lb, l, outputAt[d + first], offsets[d], w.strides[d], w.dilations[d],
                      w.pads[d], w.kernel[d], image[d], type.getDimSize(d + first));
      if (read.inside) {
        inside = both(lb, l, inside, read.inside);
        if (!isMax && w.countIncludePad) {
          // Inside the declared padding too.
          Value above = arith::CmpIOp::create(lb, l, arith::CmpIPredicate::sge, read.position,
                                              index(-w.pads[d]));
          Value below =
              arith::CmpIOp::create(lb, l, arith::CmpIPredicate::slt, read.position, padded[d]);
          counted = both(lb, l, counted, arith::AndIOp::create(lb, l, above, below));
        }
      }
      at.push_back(read.clamped);
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
    if (isMax || !overhangs)
      return {combined};
    Value count = arith::AddFOp::create(lb, l, carried[1], scalar(lb, l, element, 1.0));
    if (counted)
      count = arith::SelectOp::create(lb, l, counted, count, carried[1]);
    return {combined, count};
  };
  auto finish = [&](OpBuilder &nb, Location l, ValueRange result) -> Value {
    if (isMax)
      return result[0];
    if (!overhangs)
      return arith::DivFOp::create(nb, l, result[0],
                                   scalar(nb, l, element, double(computeProduct(w.kernel))));
    Value one = scalar(nb, l, element, 1.0);
    Value cells = arith::MaximumFOp::create(nb, l, result[1], one);
    return arith::DivFOp::create(nb, l, result[0], cells);
  };
  Value pooled = windowed(b, loc, type, w.kernel, start, step, finish);
  pooled.getDefiningOp()->setAttr(kLayoutAttr, b.getStringAttr(w.channelsLast ? "nhwc" : "nchw"));
  return pooled;
}

template <typename OpT, bool isMax> struct PoolToLinalg : OpRewritePattern<OpT> {
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
    int64_t first = op.getChannelsLast() ? 1 : 2;
    // An image a run gives is a mean over its positions.
    if (llvm::any_of(image, ShapedType::isDynamic)) {
      SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(first, first + image.size()));
      rewriter.replaceOp(op, reduce(rewriter, op.getLoc(), op.getInput(), axes, /*keepdims=*/true,
                                    ReduceKind::Mean, /*isUnsigned=*/false));
      return success();
    }
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
  patterns.add<
      ReduceToLinalg<ReduceSumOp, ReduceKind::Sum>, ReduceToLinalg<ReduceMaxOp, ReduceKind::Max>,
      ReduceToLinalg<ReduceMinOp, ReduceKind::Min>, ReduceToLinalg<ReduceProdOp, ReduceKind::Prod>,
      ReduceToLinalg<ReduceMeanOp, ReduceKind::Mean>, ArgReduceToLinalg<ArgMaxOp, true>,
      ArgReduceToLinalg<ArgMinOp, false>, CumSumToLinalg, GlobalAveragePoolToLinalg,
      SoftmaxToLinalg, LayerNormToLinalg, PoolToLinalg<MaxPoolOp, true>,
      PoolToLinalg<AveragePoolOp, false>>(context);
}

} // namespace kiln
