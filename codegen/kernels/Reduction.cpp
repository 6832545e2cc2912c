//===- Reduction.cpp - reductions, normalizations and pooling -------------===//

#include "codegen/kernels/Builders.h"
#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
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

struct GlobalAveragePoolToLinalg : OpRewritePattern<GlobalAveragePoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GlobalAveragePoolOp op, PatternRewriter &rewriter) const override {
    auto axes = llvm::to_vector(llvm::seq<int64_t>(2, op.getType().getRank()));
    rewriter.replaceOp(op, reduce(rewriter, op.getLoc(), op.getInput(), axes,
                                  /*keepdims=*/true, ReduceKind::Mean));
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

/// Max and average pooling as a linalg.generic whose window dimensions are
/// reductions. The input is padded (with -inf for max, 0 for average),
/// including the overhang ceil_mode adds; an average divides by a constant
/// per-position count of the window cells that are counted.
template <typename OpT, bool isMax>
struct PoolToLinalg : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto inputType = op.getInput().getType();
    Type element = type.getElementType();
    int64_t spatial = type.getRank() - 2;
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      pads = op.getPads(), dilations = op.getDilations();

    // Pads, widened at the end until the last window fits (ceil_mode).
    SmallVector<int64_t> low(pads.take_front(spatial)), high(pads.drop_front(spatial));
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t needed = (type.getDimSize(i + 2) - 1) * strides[i] +
                       (kernel[i] - 1) * dilations[i] + 1;
      int64_t have = inputType.getDimSize(i + 2) + low[i] + high[i];
      high[i] += std::max<int64_t>(0, needed - have);
    }
    TypedAttr identity =
        isMax ? lowestValue(element) : cast<TypedAttr>(rewriter.getZeroAttr(element));
    Value input = padSpatial(rewriter, loc, op.getInput(), low, high, identity);

    // Iteration space: n, c, o_1..o_k | k_1..k_k. The window's extents come
    // from an (unread) operand of the kernel's shape.
    MLIRContext *context = op.getContext();
    int64_t dims = 2 + 2 * spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
    SmallVector<AffineExpr> inputExprs = {d(0), d(1)}, windowExprs, outputExprs = {d(0), d(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      inputExprs.push_back(d(2 + i) * strides[i] + d(2 + spatial + i) * dilations[i]);
      windowExprs.push_back(d(2 + spatial + i));
      outputExprs.push_back(d(2 + i));
    }
    Value window = tensor::EmptyOp::create(rewriter, loc, kernel, element);
    SmallVector<AffineMap> maps = {AffineMap::get(dims, 0, inputExprs, context),
                                   AffineMap::get(dims, 0, windowExprs, context),
                                   AffineMap::get(dims, 0, outputExprs, context)};
    SmallVector<utils::IteratorType> iterators(2 + spatial, utils::IteratorType::parallel);
    iterators.append(spatial, utils::IteratorType::reduction);
    Value init = filled(rewriter, loc, type, identity);
    Value pooled =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{input, window}, ValueRange{init},
            maps, iterators,
            [](OpBuilder &b, Location l, ValueRange args) {
              Value combined = isMax ? arith::MaximumFOp::create(b, l, args[2], args[0]).getResult()
                                     : arith::AddFOp::create(b, l, args[2], args[0]).getResult();
              linalg::YieldOp::create(b, l, combined);
            })
            .getResult(0);
    if constexpr (!isMax)
      pooled = divideByCount(rewriter, loc, op, pooled);
    rewriter.replaceOp(op, pooled);
    return success();
  }

  /// Divides window sums by how many cells each window counts: the cells
  /// inside the input, or inside input and declared padding with
  /// count_include_pad (never the ceil_mode overhang).
  static Value divideByCount(PatternRewriter &rewriter, Location loc, OpT op, Value sums) {
    RankedTensorType type = op.getType();
    int64_t spatial = type.getRank() - 2;
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      pads = op.getPads(), dilations = op.getDilations();
    ArrayRef<int64_t> outShape = type.getShape().drop_front(2);
    // Per spatial dimension, the count at each output position; the count of
    // a window is their product.
    SmallVector<SmallVector<int64_t>> counts(spatial);
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t size = op.getInput().getType().getDimSize(i + 2);
      int64_t begin = op.getCountIncludePad() ? -pads[i] : 0;
      int64_t end = op.getCountIncludePad() ? size + pads[i + spatial] : size;
      for (int64_t o = 0; o < outShape[i]; ++o) {
        int64_t n = 0;
        for (int64_t k = 0; k < kernel[i]; ++k) {
          int64_t at = o * strides[i] + k * dilations[i] - pads[i];
          n += at >= begin && at < end;
        }
        counts[i].push_back(std::max<int64_t>(n, 1));
      }
    }
    Type element = type.getElementType();
    auto countType = RankedTensorType::get(outShape, element);
    SmallVector<Attribute> values;
    SmallVector<int64_t> strides2 = stridesOf(outShape);
    for (int64_t flat = 0, e = countType.getNumElements(); flat < e; ++flat) {
      int64_t product = 1;
      for (int64_t i = 0; i < spatial; ++i)
        product *= counts[i][(flat / strides2[i]) % outShape[i]];
      values.push_back(rewriter.getFloatAttr(element, double(product)));
    }
    Value divisor = arith::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(countType, values));
    return elementwise(rewriter, loc, type, ValueRange{sums, divisor},
                       [](OpBuilder &b, Location l, ValueRange args) -> Value {
                         return arith::DivFOp::create(b, l, args[0], args[1]);
                       });
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
