// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MatmulLike.cpp - contractions as linalg ----------------------------===//
//
// Conv, Gemm and MatMul become linalg.generic contractions accumulating in
// their element type, each with one reduction dimension and the result's
// innermost dimension walking both the result and the right-hand operand
// contiguously: the form `kiln-vectorize-contractions` register-tiles on
// the host, and that plain loops (i-k-j order) already stream.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Passes.h"
#include "codegen/kernels/Builders.h"
#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace kiln {
namespace {

/// A tensor of `result`'s element type whose first dimension is
/// `result`'s batch and whose others are `sizes` (either may be symbolic).
RankedTensorType batchOf(RankedTensorType result, ArrayRef<AffineExpr> sizes) {
  Dims dims = {dimsOf(result)[0]};
  llvm::append_range(dims, sizes);
  return tensorOf(dims, result.getElementType());
}

/// A contraction as linalg.generic: `init` += lhs * rhs over the given maps
/// (lhs, rhs, result) and iterators. It keeps the format `source` (the
/// Conv, Gemm or MatMul) reads, for the kernel list, and for fp8 its
/// operands' scales, in the product's order: `swapped` when lhs comes from
/// the source's second operand.
Value contract(OpBuilder &b, Operation *source, Value lhs, Value rhs, Value init,
               ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators,
               bool swapped = false) {
  Location loc = source->getLoc();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs}, ValueRange{init}, maps, iterators,
      [](OpBuilder &nested, Location l, ValueRange args) {
        Value product = arith::MulFOp::create(nested, l, args[0], args[1]);
        linalg::YieldOp::create(nested, l,
                                arith::AddFOp::create(nested, l, args[2], product).getResult());
      });
  if (Attribute precision = source->getAttr(kPrecisionAttr))
    generic->setAttr(kPrecisionAttr, precision);
  if (auto scales = source->getAttrOfType<DenseF32ArrayAttr>(kScalesAttr)) {
    SmallVector<float> ordered(scales.asArrayRef());
    if (swapped)
      std::swap(ordered[0], ordered[1]);
    generic->setAttr(kScalesAttr, b.getDenseF32ArrayAttr(ordered));
  }
  if (auto conv = dyn_cast<ConvOp>(source))
    generic->setAttr(kLayoutAttr, b.getStringAttr(conv.getChannelsLast() ? "nhwc" : "nchw"));
  return generic.getResult(0);
}

/// The sizes of convolution `op`'s input image, computed before its kernel
/// where a run gives them.
SmallVector<OpFoldResult> imageSizes(OpBuilder &b, Location loc, ConvOp op) {
  SmallVector<OpFoldResult> sizes = mixedSizes(b, loc, op.getInput().getType());
  ArrayRef<OpFoldResult> all(sizes);
  return llvm::to_vector(op.getChannelsLast() ? all.drop_front().drop_back() : all.drop_front(2));
}

/// Convolution `op`'s input at batch index `n`, `channel` and, along each
/// spatial dimension d, output position `positions[d]` moved by window
/// offset `offsets[d]` (at its stride, dilation and padding); zero where
/// that falls in the padding. Bounds are checked only along spatial
/// dimensions some window overhangs; `image` is imageSizes(op).
Value windowRead(OpBuilder &b, Location loc, ConvOp op, ArrayRef<OpFoldResult> image, Value n,
                 Value channel, ArrayRef<Value> positions, ArrayRef<Value> offsets) {
  bool last = op.getChannelsLast();
  RankedTensorType type = last ? channelsFirst(op.getType()) : op.getType();
  int64_t spatial = type.getRank() - 2;
  ArrayRef<int64_t> weightShape = op.getWeight().getType().getShape();
  ArrayRef<int64_t> window = last ? weightShape.take_front(spatial) : weightShape.drop_front(2);
  SmallVector<Value> at = {n};
  if (!last)
    at.push_back(channel);
  Value inside;
  for (int64_t d = 0; d < spatial; ++d) {
    WindowIndex read =
        windowIndex(b, loc, positions[d], offsets[d], op.getStrides()[d], op.getDilations()[d],
                    op.getPads()[d], window[d], image[d], type.getDimSize(d + 2));
    if (read.inside)
      inside = both(b, loc, inside, read.inside);
    at.push_back(read.clamped);
  }
  if (last)
    at.push_back(channel);
  Value value = tensor::ExtractOp::create(b, loc, op.getInput(), at);
  if (!inside)
    return value;
  return arith::SelectOp::create(b, loc, inside, value, scalar(b, loc, type.getElementType(), 0.0));
}

/// The im2col columns of a convolution:
///
///   columns[n, g, c, k_1..k_s, o_1..o_s] = input[n, g*C + c, o*stride + k*dilation - pad]
///
/// or, channels last, columns[n, o_1..o_s, k_1..k_s, c] = input[n, o*stride +
/// k*dilation - pad, c]; zero where that falls in the padding. Bounds are
/// checked only along spatial dimensions some window overhangs.
Value im2col(OpBuilder &b, Location loc, ConvOp op, RankedTensorType columnsType) {
  bool last = op.getChannelsLast();
  RankedTensorType type = last ? channelsFirst(op.getType()) : op.getType();
  auto inputType = last ? channelsFirst(op.getInput().getType()) : op.getInput().getType();
  int64_t spatial = type.getRank() - 2;
  auto weightShape = op.getWeight().getType().getShape();
  int64_t channelsPerGroup = last ? weightShape[spatial] : weightShape[1];
  // Where the columns keep the channel, each window offset and each output
  // position.
  int64_t channelDim = last ? 1 + 2 * spatial : 2, windowDim = last ? 1 + spatial : 3,
          outputDim = last ? 1 : 3 + spatial;
  Value init = emptyTensor(b, loc, columnsType);
  SmallVector<OpFoldResult> image = imageSizes(b, loc, op);
  auto identity = b.getMultiDimIdentityMap(columnsType.getRank());
  SmallVector<utils::IteratorType> iterators(columnsType.getRank(), utils::IteratorType::parallel);
  auto columns = linalg::GenericOp::create(
      b, loc, TypeRange{columnsType}, ValueRange{}, ValueRange{init}, ArrayRef<AffineMap>{identity},
      iterators, [&](OpBuilder &nested, Location l, ValueRange) {
        auto index = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(nested, l, value);
        };
        auto dim = [&](int64_t d) -> Value { return linalg::IndexOp::create(nested, l, d); };
        Value channel =
            last ? dim(channelDim)
                 : arith::AddIOp::create(
                       nested, l, arith::MulIOp::create(nested, l, dim(1), index(channelsPerGroup)),
                       dim(channelDim))
                       .getResult();
        SmallVector<Value> positions, offsets;
        for (int64_t i = 0; i < spatial; ++i) {
          positions.push_back(dim(outputDim + i));
          offsets.push_back(dim(windowDim + i));
        }
        Value value = windowRead(nested, l, op, image, dim(0), channel, positions, offsets);
        linalg::YieldOp::create(nested, l, value);
      });
  auto isOne = [](int64_t value) { return value == 1; };
  ArrayRef<int64_t> strides = op.getStrides();
  if (!last && spatial == 2 && llvm::all_of(op.getDilations(), isOne) && strides[0] == strides[1] &&
      ((strides[0] == 1 && sameSize(dimsOf(type)[3], dimsOf(inputType)[3])) || strides[0] == 2))
    columns->setAttr(kIm2colShiftAttr,
                     b.getDenseI64ArrayAttr({op.getPads()[0], op.getPads()[1], strides[0]}));
  return columns.getResult(0);
}

/// A depthwise convolution, a window per output:
///
///   out[n, c, o_1..o_s] = sum over k of input[n, c, o*stride + k*dilation - pad]
///                                       * weight[c, 0, k_1..k_s]
///
/// or channels last out[n, o_1..o_s, c] from input[n, ..., c] and
/// weight[k_1..k_s, 0, c], as an all-parallel generic whose body loops over
/// the window (zero where it falls in the padding), in the order the
/// grouped product sums. Each output is one thread's loop on a GPU, and
/// neighbouring threads read neighbouring channels (channels last) or
/// positions; on the host, kiln-vectorize-windows runs the innermost
/// dimension on vector lanes. The bias and what follows fuse into it.
Value depthwise(OpBuilder &b, Location loc, ConvOp op) {
  RankedTensorType type = op.getType();
  Type element = type.getElementType();
  bool last = op.getChannelsLast();
  int64_t spatial = type.getRank() - 2;
  // The first spatial dimension, in the input and the output.
  int64_t first = last ? 1 : 2;
  ArrayRef<int64_t> weightShape = op.getWeight().getType().getShape();
  ArrayRef<int64_t> window = last ? weightShape.take_front(spatial) : weightShape.drop_front(2);
  Value weight = op.getWeight();
  SmallVector<OpFoldResult> image = imageSizes(b, loc, op);
  auto step = [&](OpBuilder &lb, Location l, ArrayRef<Value> outputAt, ArrayRef<Value> offsets,
                  ValueRange sum) -> SmallVector<Value> {
    Value channel = last ? outputAt.back() : outputAt[1];
    Value zero = arith::ConstantIndexOp::create(lb, l, 0);
    Value value =
        windowRead(lb, l, op, image, outputAt[0], channel, outputAt.slice(first, spatial), offsets);
    SmallVector<Value> weightAt;
    if (last) {
      llvm::append_range(weightAt, offsets);
      weightAt.append({zero, channel});
    } else {
      weightAt = {channel, zero};
      llvm::append_range(weightAt, offsets);
    }
    Value product =
        arith::MulFOp::create(lb, l, value, tensor::ExtractOp::create(lb, l, weight, weightAt));
    return {arith::AddFOp::create(lb, l, sum[0], product)};
  };
  Value result = windowed(b, loc, type, window, {b.getZeroAttr(element)}, step,
                          [](OpBuilder &, Location, ValueRange sum) { return sum[0]; });
  result.getDefiningOp()->setAttr(kLayoutAttr, b.getStringAttr(last ? "nhwc" : "nchw"));
  return result;
}

/// Convolution as a grouped matrix product over im2col columns:
///
///   out[n, g, f, o] += weight[g, f, (c, k)] * columns[n, g, (c, k), o]
///
/// where `columns` gathers, for each output position `o`, the input window
/// it reads. Every convolution (groups, strides, dilations, any number of
/// spatial dimensions) is then the same contraction, whose innermost loop
/// walks output positions contiguously in both the output and the columns:
/// the shape `kiln-vectorize-contractions` turns into register tiles, with
/// the gather computed per tile and the bias (and what the graph fused after
/// it) applied in registers. A 1x1 convolution at stride 1 without padding
/// reads its input as the columns. A depthwise convolution, a product of a
/// single row per group, is a window per output instead (`depthwise`).
struct ConvToLinalg : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op, PatternRewriter &rewriter) const override {
    if (op.isDepthwise()) {
      Value result = depthwise(rewriter, op.getLoc(), op);
      int64_t channel = op.getChannelsLast() ? op.getType().getRank() - 1 : 1;
      rewriter.replaceOp(op, addBias(rewriter, op, result, channel));
      return success();
    }
    if (op.getChannelsLast())
      return rewriteChannelsLast(op, rewriter);
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    int64_t group = int64_t(op.getGroup());
    ArrayRef<int64_t> pads = op.getPads();
    auto weightType = op.getWeight().getType();
    MLIRContext *context = op.getContext();
    int64_t filtersPerGroup = weightType.getDimSize(0) / group;
    int64_t channelsPerGroup = weightType.getDimSize(1);
    ArrayRef<int64_t> window = weightType.getShape().drop_front(2);
    Dims outputs(ArrayRef<AffineExpr>(dimsOf(type)).drop_front(2));
    int64_t windowSize = computeProduct(window);
    int64_t reduced = channelsPerGroup * windowSize;
    auto constant = [&](int64_t size) { return getAffineConstantExpr(size, context); };
    AffineExpr positions = productOf(context, outputs);

    bool direct = llvm::all_of(window, [](int64_t k) { return k == 1; }) &&
                  llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; }) &&
                  llvm::all_of(pads, [](int64_t p) { return p == 0; });
    Dims grouped = {constant(group), constant(reduced), positions};
    Value columns;
    if (direct) {
      columns = reshape(rewriter, loc, op.getInput(), batchOf(type, grouped));
    } else {
      Dims dims = {constant(group), constant(channelsPerGroup)};
      llvm::append_range(dims, constantDims(context, window));
      llvm::append_range(dims, outputs);
      columns = im2col(rewriter, loc, op, batchOf(type, dims));
      columns = reshape(rewriter, loc, columns, batchOf(type, grouped));
    }
    Value weight = reshape(rewriter, loc, op.getWeight(), {group, filtersPerGroup, reduced});
    Value init = reshape(rewriter, loc, filled(rewriter, loc, type, rewriter.getZeroAttr(element)),
                         batchOf(type, {constant(group), constant(filtersPerGroup), positions}));

    // Iteration space: n, g, f, o | (c, k).
    AffineExpr n = rewriter.getAffineDimExpr(0), g = rewriter.getAffineDimExpr(1),
               f = rewriter.getAffineDimExpr(2), o = rewriter.getAffineDimExpr(3),
               ck = rewriter.getAffineDimExpr(4);
    SmallVector<AffineMap> maps = {AffineMap::get(5, 0, {g, f, ck}, context),
                                   AffineMap::get(5, 0, {n, g, ck, o}, context),
                                   AffineMap::get(5, 0, {n, g, f, o}, context)};
    SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value result = contract(rewriter, op, weight, columns, init, maps, iterators,
                            /*swapped=*/true);
    result = reshape(rewriter, loc, result, type);
    rewriter.replaceOp(op, addBias(rewriter, op, result, /*channel=*/1));
    return success();
  }

  /// The bias, added after the product (the start of its epilogue), along
  /// dimension `channel` of the result.
  static Value addBias(OpBuilder &b, ConvOp op, Value result, int64_t channel) {
    Value bias = op.getBias();
    if (!bias)
      return result;
    int64_t rank = op.getType().getRank();
    return elementwise(
        b, op.getLoc(), op.getType(), {result, bias},
        {b.getMultiDimIdentityMap(rank), AffineMap::get(rank, 0, b.getAffineDimExpr(channel))},
        [](OpBuilder &nested, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(nested, l, args[0], args[1]);
        });
  }

  /// A channels-last convolution of one group as one product over im2col
  /// rows:
  ///
  ///   out[n, o, m] += columns[n, o, (k, c)] * weight[(k, c), m]
  ///
  /// the output channels innermost in both the result and the weights, as
  /// an NHWC implicit GEMM reads them. A 1x1 convolution at stride 1 without
  /// padding reads its input as the rows.
  static LogicalResult rewriteChannelsLast(ConvOp op, PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    int64_t spatial = type.getRank() - 2;
    auto weightShape = op.getWeight().getType().getShape();
    MLIRContext *context = op.getContext();
    int64_t filters = type.getShape().back();
    Dims outputs(ArrayRef<AffineExpr>(dimsOf(type)).drop_front().drop_back());
    AffineExpr positions = productOf(context, outputs);
    int64_t reduced = computeProduct(weightShape.drop_back());
    ArrayRef<int64_t> window = weightShape.take_front(spatial);
    auto constant = [&](int64_t size) { return getAffineConstantExpr(size, context); };
    bool direct = llvm::all_of(window, [](int64_t k) { return k == 1; }) &&
                  llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; }) &&
                  llvm::all_of(op.getPads(), [](int64_t p) { return p == 0; });
    Value rows;
    if (direct) {
      rows = reshape(rewriter, loc, op.getInput(), batchOf(type, {positions, constant(reduced)}));
    } else {
      Dims dims = outputs;
      llvm::append_range(dims, constantDims(context, window));
      dims.push_back(constant(weightShape[spatial]));
      rows = im2col(rewriter, loc, op, batchOf(type, dims));
      rows = reshape(rewriter, loc, rows, batchOf(type, {positions, constant(reduced)}));
    }
    Value weight = reshape(rewriter, loc, op.getWeight(), {reduced, filters});
    Value init = reshape(rewriter, loc, filled(rewriter, loc, type, rewriter.getZeroAttr(element)),
                         batchOf(type, {positions, constant(filters)}));
    // Iteration space: n, o, m | (k, c).
    AffineExpr n = rewriter.getAffineDimExpr(0), o = rewriter.getAffineDimExpr(1),
               m = rewriter.getAffineDimExpr(2), kc = rewriter.getAffineDimExpr(3);
    SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {n, o, kc}, context),
                                   AffineMap::get(4, 0, {kc, m}, context),
                                   AffineMap::get(4, 0, {n, o, m}, context)};
    SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value result = contract(rewriter, op, rows, weight, init, maps, iterators);
    result = reshape(rewriter, loc, result, type);
    rewriter.replaceOp(op, addBias(rewriter, op, result, type.getRank() - 1));
    return success();
  }
};

/// Gemm: alpha * op(A) op(B) + beta * C, the transposes folded into the maps.
struct GemmToLinalg : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    AffineExpr m = rewriter.getAffineDimExpr(0), k = rewriter.getAffineDimExpr(1),
               n = rewriter.getAffineDimExpr(2);
    MLIRContext *context = op.getContext();
    // A transposed A is only read differently; a transposed B is transposed
    // first, so that the innermost loop reads it contiguously.
    Value bMatrix = op.getB();
    if (op.getTransB()) {
      auto bType = op.getB().getType();
      Value init = tensor::EmptyOp::create(
          rewriter, loc, {bType.getDimSize(1), bType.getDimSize(0)}, bType.getElementType());
      bMatrix = linalg::TransposeOp::create(rewriter, loc, bMatrix, init, ArrayRef<int64_t>{1, 0})
                    ->getResult(0);
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0,
                       op.getTransA() ? ArrayRef<AffineExpr>{k, m} : ArrayRef<AffineExpr>{m, k},
                       context),
        AffineMap::get(3, 0, {k, n}, context), AffineMap::get(3, 0, {m, n}, context)};
    SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                  utils::IteratorType::reduction,
                                                  utils::IteratorType::parallel};
    Value zeros = filled(rewriter, loc, type, rewriter.getZeroAttr(type.getElementType()));
    Value product = contract(rewriter, op, op.getA(), bMatrix, zeros, maps, iterators);

    double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
    SmallVector<Value> operands = {product};
    if (op.getC() && beta != 0.0)
      operands.push_back(op.getC());
    if (alpha != 1.0 || operands.size() > 1)
      product = elementwise(
          rewriter, loc, type, operands, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Type t = args[0].getType();
            Value result = args[0];
            if (alpha != 1.0)
              result = arith::MulFOp::create(b, l, result, scalar(b, l, t, alpha));
            if (args.size() > 1) {
              Value c =
                  beta == 1.0
                      ? args[1]
                      : arith::MulFOp::create(b, l, args[1], scalar(b, l, t, beta)).getResult();
              result = arith::AddFOp::create(b, l, result, c);
            }
            return result;
          });
    rewriter.replaceOp(op, product);
    return success();
  }
};

/// MatMul with NumPy semantics: batch dimensions broadcast, 1-D operands
/// promoted to matrices (and the promoted dimension dropped after).
struct MatMulToLinalg : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value lhs = op.getLhs(), rhs = op.getRhs();
    auto lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
    MLIRContext *context = op.getContext();
    AffineExpr one = getAffineConstantExpr(1, context);
    if (lhsType.getRank() == 1)
      lhs = reshape(rewriter, loc, lhs, withDims(lhsType, {one, dimsOf(lhsType)[0]}));
    if (rhsType.getRank() == 1)
      rhs = reshape(rewriter, loc, rhs, withDims(rhsType, {dimsOf(rhsType)[0], one}));
    std::tie(lhs, rhs) = foldSharedBatch(rewriter, loc, lhs, rhs);
    auto a = cast<RankedTensorType>(lhs.getType()), b = cast<RankedTensorType>(rhs.getType());
    Dims aDims = dimsOf(a), bDims = dimsOf(b);

    // Iteration space: batch..., m, k, n. A batch dimension is the one of
    // the operands' that is not 1 (the dialect checked they broadcast).
    int64_t batch = std::max(a.getRank(), b.getRank()) - 2;
    Dims outDims;
    for (int64_t i = 0; i < batch; ++i) {
      auto dimOf = [&](RankedTensorType t, ArrayRef<AffineExpr> dims) {
        int64_t offset = batch - (t.getRank() - 2);
        return i < offset ? one : dims[i - offset];
      };
      AffineExpr x = dimOf(a, aDims), y = dimOf(b, bDims);
      outDims.push_back(constantOf(x) == 1 ? y : x);
    }
    outDims.append({aDims[a.getRank() - 2], bDims.back()});
    int64_t dims = batch + 3;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
    auto operandMap = [&](RankedTensorType t, AffineExpr row, AffineExpr column) {
      SmallVector<AffineExpr> exprs;
      int64_t offset = batch - (t.getRank() - 2);
      Dims tDims = dimsOf(t);
      for (int64_t i = 0; i < t.getRank() - 2; ++i)
        exprs.push_back(tDims[i] == outDims[i + offset] ? d(i + offset)
                                                        : getAffineConstantExpr(0, context));
      exprs.append({row, column});
      return AffineMap::get(dims, 0, exprs, context);
    };
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < batch; ++i)
      outExprs.push_back(d(i));
    outExprs.append({d(batch), d(batch + 2)});
    SmallVector<AffineMap> maps = {operandMap(a, d(batch), d(batch + 1)),
                                   operandMap(b, d(batch + 1), d(batch + 2)),
                                   AffineMap::get(dims, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(batch + 1, utils::IteratorType::parallel);
    iterators.append({utils::IteratorType::reduction, utils::IteratorType::parallel});
    auto outType = tensorOf(outDims, type.getElementType());
    Value zeros = filled(rewriter, loc, outType, rewriter.getZeroAttr(type.getElementType()));
    Value result = contract(rewriter, op, lhs, rhs, zeros, maps, iterators);
    rewriter.replaceOp(op, reshape(rewriter, loc, result, type));
    return success();
  }

private:
  /// At most this many elements of A (1 MiB of f32, half a core's L2 here)
  /// are folded into one matrix's rows.
  static constexpr int64_t kFoldedElements = 1 << 18;

  /// Where every batch index of A multiplies the same B (a weight, as a
  /// channels-last model's Linear layers read an image: [1, 7, 7, 768] x
  /// [768, 3072]), A's batch dimensions next to its rows become rows: a
  /// product reads each column tile of B once for all of them, not once per
  /// batch index (7 rows each, ConvNeXt's last stage read its weights from
  /// memory 7 times). Dimensions fold from the innermost while they are
  /// static and the rows of A stay within `kFoldedElements`, where a tile
  /// of B's columns still finds them in cache.
  static std::pair<Value, Value> foldSharedBatch(OpBuilder &builder, Location loc, Value lhs,
                                                 Value rhs) {
    auto a = cast<RankedTensorType>(lhs.getType()), b = cast<RankedTensorType>(rhs.getType());
    ArrayRef<int64_t> aShape = a.getShape(), bShape = b.getShape();
    if (a.getRank() < 3 || !llvm::all_of(bShape.drop_back(2), [](int64_t d) { return d == 1; }))
      return {lhs, rhs};
    int64_t rank = a.getRank(), rows = aShape[rank - 2], depth = aShape[rank - 1];
    if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(depth))
      return {lhs, rhs};
    int64_t first = rank - 2;
    while (first > 0 && !ShapedType::isDynamic(aShape[first - 1]) &&
           rows * aShape[first - 1] * depth <= kFoldedElements)
      rows *= aShape[--first];
    if (first == rank - 2)
      return {lhs, rhs};
    Dims aDims = dimsOf(a);
    Dims folded(aDims.begin(), aDims.begin() + first);
    folded.append({getAffineConstantExpr(rows, builder.getContext()), aDims.back()});
    lhs = reshape(builder, loc, lhs, withDims(a, folded));
    if (b.getRank() > 2)
      rhs = reshape(builder, loc, rhs, withDims(b, ArrayRef<AffineExpr>(dimsOf(b)).take_back(2)));
    return {lhs, rhs};
  }
};

} // namespace

void populateMatmulLikeKernels(RewritePatternSet &patterns) {
  patterns.add<ConvToLinalg, GemmToLinalg, MatMulToLinalg>(patterns.getContext());
}

} // namespace kiln
