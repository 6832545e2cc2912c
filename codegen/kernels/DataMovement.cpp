// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- DataMovement.cpp - reshapes, transposes, slices, gathers, pads -----===//

#include "codegen/kernels/Builders.h"
#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/StringSwitch.h"

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
                       SmallVector<Value> loops = loopIndices(nested, l, type.getRank());
                       return tensor::ExtractOp::create(nested, l, source,
                                                        indexFn(nested, l, loops, args));
                     });
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// An ONNX index (i32 or i64) as an index into a dimension of `size` (a
/// value where the dimension is symbolic, else a constant):
/// negative counts from the end, and out of range is clamped, so no input
/// can make a kernel read outside its tensor.
Value clampedIndex(OpBuilder &b, Location loc, Value index, Value size) {
  index = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  Value zero = indexConstant(b, loc, 0);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  index =
      arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, index, size), index);
  index = arith::MaxSIOp::create(b, loc, index, zero);
  Value last = arith::SubIOp::create(b, loc, size, indexConstant(b, loc, 1));
  return arith::MinSIOp::create(b, loc, index, last);
}

Value clampedIndex(OpBuilder &b, Location loc, Value index, int64_t size) {
  index = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  Value zero = indexConstant(b, loc, 0);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  index = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, index, indexConstant(b, loc, size)), index);
  index = arith::MaxSIOp::create(b, loc, index, zero);
  return arith::MinSIOp::create(b, loc, index, indexConstant(b, loc, size - 1));
}

struct ReshapeToTensor : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshape(rewriter, op.getLoc(), op.getInput(), op.getType()));
    return success();
  }
};

struct TransposeToLinalg : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType());
    rewriter.replaceOp(
        op, linalg::TransposeOp::create(rewriter, op.getLoc(), op.getInput(), init, op.getPerm())
                ->getResults());
    return success();
  }
};

/// Concat: each input inserted at its offset along the axis, into an empty
/// tensor that bufferization turns into the result's buffer, with each
/// input's producer computing straight into its slice; past kGroupWidth
/// inputs, groups of them concatenated first, then the groups.
struct ConcatToTensor : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    int64_t axis = int64_t(op.getAxis());
    SmallVector<Value> inputs(op.getInputs());
    // (kiln-lower-to-linalg refuses more than kGroupWidth symbolic inputs:
    // the groups take static sizes.)
    if (isSymbolic(type)) {
      rewriter.replaceOp(op,
                         insertSymbolic(rewriter, op.getLoc(),
                                        emptyTensor(rewriter, op.getLoc(), type), axis, inputs));
      return success();
    }
    while (inputs.size() > kGroupWidth) {
      SmallVector<Value> groups;
      for (size_t first = 0; first < inputs.size(); first += kGroupWidth) {
        ArrayRef<Value> group =
            ArrayRef(inputs).slice(first, std::min(kGroupWidth, inputs.size() - first));
        SmallVector<int64_t> shape(type.getShape());
        shape[axis] = 0;
        for (Value input : group)
          shape[axis] += cast<RankedTensorType>(input.getType()).getDimSize(axis);
        Value buffer = bufferization::AllocTensorOp::create(rewriter, op.getLoc(),
                                                            type.clone(shape), ValueRange());
        groups.push_back(insertAll(rewriter, op.getLoc(), buffer, axis, group));
      }
      inputs = std::move(groups);
    }
    Value result =
        tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(), type.getElementType());
    rewriter.replaceOp(op, insertAll(rewriter, op.getLoc(), result, axis, inputs));
    return success();
  }

  /// The same where sizes are symbolic: each offset along `axis` the sum
  /// of the sizes before it.
  static Value insertSymbolic(PatternRewriter &rewriter, Location loc, Value result, int64_t axis,
                              ArrayRef<Value> inputs) {
    int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        ones(rank, rewriter.getIndexAttr(1));
    Value offset = indexConstant(rewriter, loc, 0);
    for (Value input : inputs) {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, input);
      offsets[axis] = offset;
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result, offsets, sizes, ones);
      offset = arith::AddIOp::create(rewriter, loc, offset, dimSize(rewriter, loc, input, axis));
    }
    return result;
  }

  /// `inputs` inserted one after another along `axis` into `result`.
  static Value insertAll(PatternRewriter &rewriter, Location loc, Value result, int64_t axis,
                         ArrayRef<Value> inputs) {
    int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
    SmallVector<int64_t> offsets(rank, 0), ones(rank, 1);
    for (Value input : inputs) {
      auto inputType = cast<RankedTensorType>(input.getType());
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, inputType.getShape()), indexAttrs(rewriter, ones));
      offsets[axis] += inputType.getDimSize(axis);
    }
    return result;
  }
};

/// Split: each output a slice of the input; past kGroupWidth outputs, the
/// input sliced into at most kGroupWidth groups of outputs, each group
/// copied into a buffer of its own and split there in turn.
struct SplitToTensor : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op, PatternRewriter &rewriter) const override {
    SmallVector<RankedTensorType> types;
    for (Value output : op.getOutputs())
      types.push_back(cast<RankedTensorType>(output.getType()));
    rewriter.replaceOp(op,
                       split(rewriter, op.getLoc(), op.getInput(), int64_t(op.getAxis()), types));
    return success();
  }

  /// `input` cut along `axis` into consecutive slices of `types`.
  static SmallVector<Value> split(PatternRewriter &rewriter, Location loc, Value input,
                                  int64_t axis, ArrayRef<RankedTensorType> types) {
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    SmallVector<int64_t> offsets(rank, 0), ones(rank, 1);
    auto slice = [&](RankedTensorType type) {
      Value result = tensor::ExtractSliceOp::create(
          rewriter, loc, type, input, indexAttrs(rewriter, offsets),
          mixedSizes(rewriter, loc, type), indexAttrs(rewriter, ones));
      offsets[axis] += type.getDimSize(axis);
      return result;
    };
    SmallVector<Value> results;
    if (types.size() <= kGroupWidth) {
      for (RankedTensorType type : types)
        results.push_back(slice(type));
      return results;
    }
    size_t groupSize = kGroupWidth;
    while (types.size() > groupSize * kGroupWidth)
      groupSize *= kGroupWidth;
    for (size_t first = 0; first < types.size(); first += groupSize) {
      ArrayRef<RankedTensorType> group =
          types.slice(first, std::min(groupSize, types.size() - first));
      SmallVector<int64_t> shape(group.front().getShape());
      shape[axis] = 0;
      for (RankedTensorType type : group)
        shape[axis] += type.getDimSize(axis);
      auto groupType = group.front().clone(shape);
      Value buffer = bufferization::AllocTensorOp::create(rewriter, loc, groupType, ValueRange());
      Value copy = linalg::CopyOp::create(rewriter, loc, slice(groupType), buffer).getResult(0);
      llvm::append_range(results, split(rewriter, loc, copy, axis, group));
    }
    return results;
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
    // Symbolic bounds: an extract_slice at offsets computed from the
    // symbols (every symbolic axis has step 1).
    if (DimsAttr bounds = op.getBoundsAttr()) {
      SmallVector<Value> symbols = symbolValues(rewriter);
      SmallVector<OpFoldResult> offsets;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        AffineExpr start = bounds.getMap().getResult(d);
        if (std::optional<int64_t> constant = constantOf(start))
          offsets.push_back(rewriter.getIndexAttr(*constant));
        else
          offsets.push_back(affine::expandAffineExpr(rewriter, loc, start, ValueRange{}, symbols));
      }
      SmallVector<OpFoldResult> sizes = mixedSizes(rewriter, loc, type);
      rewriter.replaceOp(op,
                         tensor::ExtractSliceOp::create(rewriter, loc, type, op.getInput(), offsets,
                                                        sizes, indexAttrs(rewriter, steps)));
      return success();
    }
    // An empty slice reads nothing, wherever it starts (even past the end).
    if (type.getNumElements() == 0) {
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, type.getShape(), type.getElementType());
      return success();
    }
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
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

/// Gather: out[outer, idx..., inner] = in[outer, indices[idx...], inner].
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
        op,
        gatherElements(rewriter, op.getLoc(), type, op.getIndices(), {indexMap}, op.getInput(),
                       [&](OpBuilder &b, Location l, ValueRange loops, ValueRange args) {
                         SmallVector<Value> indices(loops.take_front(axis));
                         indices.push_back(
                             ShapedType::isDynamic(axisSize)
                                 ? clampedIndex(b, l, args[0], dimSize(b, l, op.getInput(), axis))
                                 : clampedIndex(b, l, args[0], axisSize));
                         llvm::append_range(indices, loops.drop_front(axis + indexRank));
                         return indices;
                       }));
    return success();
  }
};

/// GatherElements: out[p] = in[p with its axis coordinate = indices[p]].
struct GatherElementsToLinalg : OpRewritePattern<GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherElementsOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    int64_t axis = int64_t(op.getAxis());
    int64_t axisSize = op.getInput().getType().getDimSize(axis);
    rewriter.replaceOp(
        op, gatherElements(rewriter, op.getLoc(), type, op.getIndices(),
                           {rewriter.getMultiDimIdentityMap(type.getRank())}, op.getInput(),
                           [&](OpBuilder &b, Location l, ValueRange loops, ValueRange args) {
                             SmallVector<Value> indices(loops);
                             indices[axis] = clampedIndex(b, l, args[0], axisSize);
                             return indices;
                           }));
    return success();
  }
};

/// GatherND: out[b, i, rest] = in[b, indices[b, i, 0..q), rest], each tuple
/// entry read from `indices` in the body.
struct GatherNDToLinalg : OpRewritePattern<GatherNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherNDOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> inShape = op.getInput().getType().getShape();
    int64_t batchDims = int64_t(op.getBatchDims());
    int64_t indexRank = op.getIndices().getType().getRank();
    int64_t tuple = op.getIndices().getType().getShape().back();
    Value indicesTensor = op.getIndices();
    rewriter.replaceOp(
        op, gatherElements(rewriter, op.getLoc(), type, {}, {}, op.getInput(),
                           [&](OpBuilder &b, Location l, ValueRange loops, ValueRange) {
                             // loops: the index tuple's position (indexRank - 1
                             // dimensions, batch first), then the rest.
                             SmallVector<Value> at(loops.take_front(indexRank - 1));
                             SmallVector<Value> indices(loops.take_front(batchDims));
                             at.push_back(Value());
                             for (int64_t k = 0; k < tuple; ++k) {
                               at.back() = indexConstant(b, l, k);
                               Value entry = tensor::ExtractOp::create(b, l, indicesTensor, at);
                               indices.push_back(clampedIndex(b, l, entry, inShape[batchDims + k]));
                             }
                             llvm::append_range(indices, loops.drop_front(indexRank - 1));
                             return indices;
                           }));
    return success();
  }
};

/// Combines what a scatter finds at a position with an update.
Value combineUpdate(OpBuilder &b, Location loc, StringRef reduction, Value current, Value update,
                    bool isUnsigned) {
  std::optional<ReduceKind> kind = llvm::StringSwitch<std::optional<ReduceKind>>(reduction)
                                       .Case("add", ReduceKind::Sum)
                                       .Case("mul", ReduceKind::Prod)
                                       .Case("max", ReduceKind::Max)
                                       .Case("min", ReduceKind::Min)
                                       .Default(std::nullopt);
  return kind ? combine(b, loc, *kind, update, current, isUnsigned) : update;
}

/// A scatter as a gather: each output element starts from `data` and
/// loops over the `count` updates that could land on it; `step` gets the
/// output position and an update's number and returns whether the update
/// lands there and its value.
Value scatterInto(
    OpBuilder &b, Location loc, Value data, StringRef reduction, bool isUnsigned,
    function_ref<Value(OpBuilder &, Location, ValueRange)> count,
    function_ref<std::pair<Value, Value>(OpBuilder &, Location, ValueRange, Value)> step) {
  auto type = cast<RankedTensorType>(data.getType());
  return elementwise(
      b, loc, type, ValueRange{data}, [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        SmallVector<Value> at = loopIndices(nb, l, type.getRank());
        auto loop = scf::ForOp::create(
            nb, l, indexConstant(nb, l, 0), count(nb, l, at), indexConstant(nb, l, 1),
            ValueRange{args[0]}, [&](OpBuilder &inner, Location, Value u, ValueRange carried) {
              auto [lands, update] = step(inner, l, at, u);
              Value combined = combineUpdate(inner, l, reduction, carried[0], update, isUnsigned);
              scf::YieldOp::create(
                  inner, l,
                  ValueRange{arith::SelectOp::create(inner, l, lands, combined, carried[0])});
            });
        return loop.getResult(0);
      });
}

/// ScatterElements: output position p takes the updates at positions that
/// share p's coordinates but along the axis, where the index names p's.
struct ScatterElementsToLinalg : OpRewritePattern<ScatterElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterElementsOp op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> indexShape = op.getIndices().getType().getShape();
    int64_t axis = int64_t(op.getAxis()), axisSize = type.getDimSize(axis);
    Value indices = op.getIndices(), updates = op.getUpdates();
    rewriter.replaceOp(
        op,
        scatterInto(
            rewriter, op.getLoc(), op.getData(), op.getReduction(), unsignedOperand(op, 0),
            [&](OpBuilder &b, Location l, ValueRange at) -> Value {
              // No update reaches a position outside the indices' extent.
              Value inside;
              for (int64_t d = 0; d < type.getRank(); ++d)
                if (d != axis)
                  inside = both(b, l, inside,
                                arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, at[d],
                                                      indexConstant(b, l, indexShape[d])));
              Value count = indexConstant(b, l, indexShape[axis]);
              return inside ? arith::SelectOp::create(b, l, inside, count, indexConstant(b, l, 0))
                                  .getResult()
                            : count;
            },
            [&](OpBuilder &b, Location l, ValueRange at, Value u) {
              SmallVector<Value> from(at);
              from[axis] = u;
              Value target =
                  clampedIndex(b, l, tensor::ExtractOp::create(b, l, indices, from), axisSize);
              Value lands = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, target, at[axis]);
              return std::pair<Value, Value>(lands, tensor::ExtractOp::create(b, l, updates, from));
            }));
    return success();
  }
};

/// ScatterND: output position p takes every update slice whose index tuple
/// names p's leading coordinates.
struct ScatterNDToLinalg : OpRewritePattern<ScatterNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterNDOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> indexShape = op.getIndices().getType().getShape();
    int64_t tuple = indexShape.back(), tuples = 1;
    for (int64_t size : indexShape.drop_back())
      tuples *= size;
    // Indices as [tuples, q] and updates as [tuples, rest...].
    Value indices = reshape(rewriter, loc, op.getIndices(), {tuples, tuple});
    SmallVector<int64_t> updateShape = {tuples};
    llvm::append_range(updateShape, type.getShape().drop_front(tuple));
    Value updates = reshape(rewriter, loc, op.getUpdates(), updateShape);
    rewriter.replaceOp(
        op,
        scatterInto(
            rewriter, loc, op.getData(), op.getReduction(), unsignedOperand(op, 0),
            [&](OpBuilder &b, Location l, ValueRange) -> Value {
              return indexConstant(b, l, tuples);
            },
            [&](OpBuilder &b, Location l, ValueRange at, Value u) {
              Value lands;
              for (int64_t k = 0; k < tuple; ++k) {
                Value entry =
                    tensor::ExtractOp::create(b, l, indices, ValueRange{u, indexConstant(b, l, k)});
                Value target = clampedIndex(b, l, entry, type.getDimSize(k));
                lands = both(b, l, lands,
                             arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, target, at[k]));
              }
              SmallVector<Value> from = {u};
              llvm::append_range(from, at.drop_front(tuple));
              return std::pair<Value, Value>(lands, tensor::ExtractOp::create(b, l, updates, from));
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
               GatherToLinalg, GatherElementsToLinalg, GatherNDToLinalg, ScatterElementsToLinalg,
               ScatterNDToLinalg, PadToTensor>(patterns.getContext());
}

} // namespace kiln
