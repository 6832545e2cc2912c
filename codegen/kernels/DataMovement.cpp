//===- DataMovement.cpp - reshapes, transposes, slices, gathers, pads -----===//

#include "codegen/kernels/Builders.h"
#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace kiln {
namespace {

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return getAsIndexOpFoldResult(b.getContext(), values);
}

/// A generic over `type` whose body reads `source` at computed indices:
/// `indexFn` gets the result's loop indices and returns the source's.
Value gatherElements(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps, Value source,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange, ValueRange)> indexFn) {
  return elementwise(b, loc, type, inputs, inputMaps,
                     [&](OpBuilder &nested, Location l, ValueRange args) -> Value {
                       SmallVector<Value> loops;
                       for (int64_t d = 0; d < type.getRank(); ++d)
                         loops.push_back(linalg::IndexOp::create(nested, l, d));
                       return tensor::ExtractOp::create(nested, l, source,
                                                        indexFn(nested, l, loops, args));
                     });
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

struct ReshapeToTensor : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshape(rewriter, op.getLoc(), op.getInput(), op.getType().getShape()));
    return success();
  }
};

struct TransposeToLinalg : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value init =
        tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(), type.getElementType());
    rewriter.replaceOp(
        op, linalg::TransposeOp::create(rewriter, op.getLoc(), op.getInput(), init, op.getPerm())
                ->getResults());
    return success();
  }
};

/// Concat: each input inserted at its offset along the axis.
struct ConcatToTensor : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    int64_t axis = int64_t(op.getAxis());
    Value result = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    SmallVector<int64_t> offsets(type.getRank(), 0), ones(type.getRank(), 1);
    for (Value input : op.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, inputType.getShape()), indexAttrs(rewriter, ones));
      offsets[axis] += inputType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitToTensor : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op, PatternRewriter &rewriter) const override {
    int64_t axis = int64_t(op.getAxis()), rank = op.getInput().getType().getRank();
    SmallVector<int64_t> offsets(rank, 0), ones(rank, 1);
    SmallVector<Value> results;
    for (Value output : op.getOutputs()) {
      auto type = cast<RankedTensorType>(output.getType());
      results.push_back(tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), type, op.getInput(), indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, type.getShape()), indexAttrs(rewriter, ones)));
      offsets[axis] += type.getDimSize(axis);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Slice: a strided tensor.extract_slice when every step is positive;
/// otherwise an elementwise read at start + i * step.
struct SliceToTensor : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; }) || type.getNumElements() == 0) {
      rewriter.replaceOp(op, tensor::ExtractSliceOp::create(rewriter, loc, type, op.getInput(),
                                                            indexAttrs(rewriter, starts),
                                                            indexAttrs(rewriter, type.getShape()),
                                                            indexAttrs(rewriter, steps)));
      return success();
    }
    rewriter.replaceOp(
        op,
        gatherElements(rewriter, loc, type, {}, {}, op.getInput(),
                       [&](OpBuilder &b, Location l, ValueRange loops, ValueRange) {
                         SmallVector<Value> indices;
                         for (auto [i, loop] : llvm::enumerate(loops))
                           indices.push_back(arith::AddIOp::create(
                               b, l, indexConstant(b, l, starts[i]),
                               arith::MulIOp::create(b, l, loop, indexConstant(b, l, steps[i]))));
                         return indices;
                       }));
    return success();
  }
};

/// Gather: out[outer, idx..., inner] = in[outer, indices[idx...], inner]. A
/// negative index counts from the end; an index out of range is clamped, so
/// no input can make a kernel read outside its tensor.
struct GatherToLinalg : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    auto indicesType = op.getIndices().getType();
    int64_t axis = int64_t(op.getAxis()), indexRank = indicesType.getRank();
    int64_t axisSize = op.getInput().getType().getDimSize(axis);
    MLIRContext *context = op.getContext();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t i = 0; i < indexRank; ++i)
      indexExprs.push_back(getAffineDimExpr(axis + i, context));
    AffineMap indexMap = AffineMap::get(type.getRank(), 0, indexExprs, context);
    rewriter.replaceOp(
        op, gatherElements(
                rewriter, op.getLoc(), type, op.getIndices(), {indexMap}, op.getInput(),
                [&](OpBuilder &b, Location l, ValueRange loops, ValueRange args) {
                  Value index = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
                  Value size = indexConstant(b, l, axisSize);
                  Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index,
                                                         indexConstant(b, l, 0));
                  index = arith::SelectOp::create(b, l, negative,
                                                  arith::AddIOp::create(b, l, index, size), index);
                  index = arith::MaxSIOp::create(b, l, index, indexConstant(b, l, 0));
                  index = arith::MinSIOp::create(b, l, index, indexConstant(b, l, axisSize - 1));
                  SmallVector<Value> indices(loops.take_front(axis));
                  indices.push_back(index);
                  llvm::append_range(indices, loops.drop_front(axis + indexRank));
                  return indices;
                }));
    return success();
  }
};

/// Pad: constant mode with tensor.pad (after a crop for negative pads);
/// reflect and edge read the input at a mirrored or clamped index.
struct PadToTensor : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    auto inputType = op.getInput().getType();
    int64_t rank = type.getRank();
    ArrayRef<int64_t> pads = op.getPads();
    Type element = type.getElementType();

    if (op.getMode() != PadMode::constant) {
      bool reflect = op.getMode() == PadMode::reflect;
      rewriter.replaceOp(
          op, gatherElements(rewriter, loc, type, {}, {}, op.getInput(),
                             [&](OpBuilder &b, Location l, ValueRange loops, ValueRange) {
                               SmallVector<Value> indices;
                               for (int64_t d = 0; d < rank; ++d) {
                                 Value zero = indexConstant(b, l, 0);
                                 Value last = indexConstant(b, l, inputType.getDimSize(d) - 1);
                                 Value at = arith::SubIOp::create(b, l, loops[d],
                                                                  indexConstant(b, l, pads[d]));
                                 if (reflect) {
                                   // Mirror about 0 and about the last element; pads are
                                   // smaller than the dimension, so once suffices.
                                   at = arith::MaxSIOp::create(
                                       b, l, at, arith::SubIOp::create(b, l, zero, at));
                                   Value twiceLast = arith::AddIOp::create(b, l, last, last);
                                   at = arith::MinSIOp::create(
                                       b, l, at, arith::SubIOp::create(b, l, twiceLast, at));
                                 }
                                 at = arith::MaxSIOp::create(b, l, at, zero);
                                 indices.push_back(arith::MinSIOp::create(b, l, at, last));
                               }
                               return indices;
                             }));
      return success();
    }

    // Negative pads crop first; then the non-negative rest pads.
    Value input = op.getInput();
    SmallVector<int64_t> cropOffsets(rank), cropShape(inputType.getShape()), low(rank), high(rank);
    bool crops = false;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t before = pads[d], after = pads[d + rank];
      cropOffsets[d] = std::max<int64_t>(0, -before);
      cropShape[d] += std::min<int64_t>(0, before) + std::min<int64_t>(0, after);
      low[d] = std::max<int64_t>(0, before);
      high[d] = std::max<int64_t>(0, after);
      crops |= before < 0 || after < 0;
    }
    if (crops)
      input = tensor::ExtractSliceOp::create(
          rewriter, loc, inputType.clone(cropShape), input, indexAttrs(rewriter, cropOffsets),
          indexAttrs(rewriter, cropShape), indexAttrs(rewriter, SmallVector<int64_t>(rank, 1)));
    Value fill = scalar(rewriter, loc, element, op.getValue().convertToDouble());
    rewriter.replaceOp(op,
                       tensor::PadOp::create(rewriter, loc, type, input, indexAttrs(rewriter, low),
                                             indexAttrs(rewriter, high), fill));
    return success();
  }
};

} // namespace

void populateDataMovementKernels(RewritePatternSet &patterns) {
  patterns.add<ReshapeToTensor, TransposeToLinalg, ConcatToTensor, SplitToTensor, SliceToTensor,
               GatherToLinalg, PadToTensor>(patterns.getContext());
}

} // namespace kiln
