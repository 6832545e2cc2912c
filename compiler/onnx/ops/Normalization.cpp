// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Normalization.cpp - normalizations, Softmax and its relatives ------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

namespace {

LogicalResult convertBatchNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(5)))
    return failure();
  if (ctx.intAttr("training_mode", 0) != 0)
    return ctx.error() << "training_mode is not supported; kiln compiles inference";
  for (int i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.isOutputUsed(i))
      return ctx.error() << "the running mean and variance outputs exist only in training";
  Builder &b = ctx.builder();
  return ctx.emit<BatchNormOp>(
      {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
      {ctx.named("epsilon", b.getF32FloatAttr(ctx.floatAttr("epsilon", 1e-5f)))});
}

/// LayerNormalization with its Mean and InvStdDev outputs, as ONNX defines
/// it: the statistics in f32 (the stash type), the normalized values cast
/// back, then scaled and shifted.
LogicalResult layerNormWithStatistics(NodeContext &ctx, int64_t axis) {
  RankedTensorType type = ctx.inputType(0);
  Builder &b = ctx.builder();
  if (ctx.intAttr("stash_type", 1) != onnx::TensorProto::FLOAT)
    return ctx.error() << "only stash_type 1 (float) is supported with the Mean and InvStdDev "
                          "outputs";
  Type f32 = b.getF32Type(), element = type.getElementType();
  SmallVector<NamedAttribute> along = {
      ctx.named("axes",
                b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(axis, type.getRank())))),
      ctx.named("keepdims", b.getBoolAttr(true))};
  Value x = ctx.castTo(ctx.input(0), f32);
  Value mean = x ? ctx.make<ReduceMeanOp>({x}, along) : Value();
  Value centered = mean ? ctx.make<SubOp>({x, mean}) : Value();
  Value square = centered ? ctx.make<MulOp>({centered, centered}) : Value();
  Value variance = square ? ctx.make<ReduceMeanOp>({square}, along) : Value();
  Value epsilon = ctx.scalarConstant(f32, ctx.floatAttr("epsilon", 1e-5f));
  Value shifted = variance ? ctx.make<AddOp>({variance, epsilon}) : Value();
  Value deviation = shifted ? ctx.make<SqrtOp>({shifted}) : Value();
  Value inverse = deviation ? ctx.make<ReciprocalOp>({deviation}) : Value();
  Value normalized = inverse ? ctx.make<MulOp>({centered, inverse}) : Value();
  normalized = ctx.castTo(normalized, element);
  Value y = normalized ? ctx.make<MulOp>({normalized, ctx.input(1)}) : Value();
  if (y && ctx.hasInput(2))
    y = ctx.make<AddOp>({y, ctx.input(2)});
  if (!y)
    return failure();
  ctx.setOutput(0, y);
  ctx.setOutput(1, mean);
  if (ctx.numOutputs() > 2)
    ctx.setOutput(2, inverse);
  return success();
}

LogicalResult convertLayerNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  std::optional<int64_t> axis = ctx.axisAttr(-1, rank);
  if (!axis)
    return failure();
  for (int i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.isOutputUsed(i))
      return layerNormWithStatistics(ctx, *axis);
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  Builder &b = ctx.builder();
  return ctx.emit<LayerNormOp>(
      operands, {ctx.named("axis", b.getI64IntegerAttr(*axis)),
                 ctx.named("epsilon", b.getF32FloatAttr(ctx.floatAttr("epsilon", 1e-5f)))});
}

enum class Normalize { Softmax, LogSoftmax, Hardmax };

/// Softmax of `x` along `axis`; its logarithm, x - m - log(sum(exp(x - m)))
/// with m the maximum, which neither overflows nor takes the log of an
/// underflowed zero; or Hardmax, 1 at each row's first maximum.
std::optional<Value> normalize(NodeContext &ctx, Value x, int64_t axis, Normalize kind) {
  Builder &b = ctx.builder();
  auto built = [](std::optional<SmallVector<Value>> values) -> std::optional<Value> {
    return values ? std::optional<Value>(values->front()) : std::nullopt;
  };
  if (kind == Normalize::Softmax)
    return built(ctx.create<SoftmaxOp>({x}, {ctx.named("axis", b.getI64IntegerAttr(axis))}));
  if (kind == Normalize::Hardmax) {
    auto type = cast<RankedTensorType>(x.getType());
    Value max = ctx.make<ArgMaxOp>({x}, {ctx.named("axis", b.getI64IntegerAttr(axis)),
                                         ctx.named("keepdims", b.getBoolAttr(true)),
                                         ctx.named("select_last_index", b.getBoolAttr(false))});
    SmallVector<int64_t> shape(type.getRank(), 1);
    shape[axis] = type.getDimSize(axis);
    auto positions = llvm::to_vector(llvm::seq<int64_t>(0, shape[axis]));
    Value iota = ctx.constant(DenseElementsAttr::get(RankedTensorType::get(shape, b.getI64Type()),
                                                     ArrayRef<int64_t>(positions)));
    Value hot = max ? ctx.make<EqualOp>({max, iota}) : Value();
    Value result =
        hot ? ctx.make<CastOp>({hot}, {ctx.named("to", TypeAttr::get(type.getElementType()))})
            : Value();
    return result ? std::optional<Value>(result) : std::nullopt;
  }
  SmallVector<NamedAttribute> along = {ctx.named("axes", b.getDenseI64ArrayAttr({axis})),
                                       ctx.named("keepdims", b.getBoolAttr(true))};
  std::optional<Value> max = built(ctx.create<ReduceMaxOp>({x}, along));
  std::optional<Value> shifted = max ? built(ctx.create<SubOp>({x, *max})) : std::nullopt;
  std::optional<Value> exp = shifted ? built(ctx.create<ExpOp>({*shifted})) : std::nullopt;
  std::optional<Value> sum = exp ? built(ctx.create<ReduceSumOp>({*exp}, along)) : std::nullopt;
  std::optional<Value> logSum = sum ? built(ctx.create<LogOp>({*sum})) : std::nullopt;
  return logSum ? built(ctx.create<SubOp>({*shifted, *logSum})) : std::nullopt;
}

/// Softmax, LogSoftmax or Hardmax, as `kind` says.
LogicalResult convertSoftmax(NodeContext &ctx, Normalize kind) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (kind != Normalize::Softmax && failed(ctx.requireFloat(0)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  // Opset 13 made the axis a single dimension (default -1). Before, the
  // input was flattened to 2-D at `axis` (default 1) and normalized per row.
  int64_t rawAxis = ctx.intAttr("axis", ctx.opset() >= 13 ? -1 : 1);
  std::optional<int64_t> axis = normalizeAxis(rawAxis, rank);
  if (!axis)
    return ctx.error() << "axis " << rawAxis << " is out of range for rank " << rank;
  Builder &b = ctx.builder();
  if (ctx.opset() >= 13 || *axis == rank - 1) {
    std::optional<Value> result = normalize(ctx, ctx.input(0), *axis, kind);
    if (!result)
      return failure();
    ctx.setOutput(0, *result);
    return success();
  }

  if (isSymbolic(type))
    return ctx.error() << "before opset 13 it flattens its input to rows, which kiln does not "
                          "yet do for symbolic shapes";
  auto rows = elementCount(type.getShape().take_front(*axis));
  auto columns = elementCount(type.getShape().drop_front(*axis));
  if (!rows || !columns)
    return ctx.error() << "the flattened shape has too many elements";
  auto flat = ctx.create<ReshapeOp>(
      {ctx.input(0)}, {ctx.named("shape", b.getDenseI64ArrayAttr({*rows, *columns}))});
  if (!flat)
    return failure();
  std::optional<Value> normalized = normalize(ctx, flat->front(), 1, kind);
  if (!normalized)
    return failure();
  return ctx.emit<ReshapeOp>({*normalized},
                             {ctx.named("shape", b.getDenseI64ArrayAttr(type.getShape()))});
}

/// Normalizes each row of `x` (its dimensions from `axis` on) to mean 0
/// and variance 1: a layer_norm without scale or bias.
Value standardize(NodeContext &ctx, Value x, int64_t axis, float epsilon) {
  auto type = cast<RankedTensorType>(x.getType());
  auto rowType = RankedTensorType::get(type.getShape().drop_front(axis), type.getElementType());
  Builder &b = ctx.builder();
  Value ones =
      ctx.constant(DenseElementsAttr::get(rowType, b.getFloatAttr(type.getElementType(), 1.0)));
  return ctx.make<LayerNormOp>({x, ones}, {ctx.named("axis", b.getI64IntegerAttr(axis)),
                                           ctx.named("epsilon", b.getF32FloatAttr(epsilon))});
}

/// `x` * scale + bias with scale and bias per channel (dimension 1).
Value scaleChannels(NodeContext &ctx, Value x, Value scale, Value bias) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getRank() - 1, 1);
  shape[0] = type.getDimSize(1);
  Value s = ctx.reshape(scale, shape);
  Value scaled = s ? ctx.make<MulOp>({x, s}) : Value();
  Value bb = scaled ? ctx.reshape(bias, shape) : Value();
  return bb ? ctx.make<AddOp>({scaled, bb}) : Value();
}

LogicalResult convertInstanceNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)) || failed(ctx.requireFloat(0)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (type.getRank() < 3)
    return ctx.error() << "expected an N x C x D1... input, got " << type;
  for (int i : {1, 2})
    if (ctx.inputType(i).getShape() != ArrayRef<int64_t>{type.getDimSize(1)})
      return ctx.error() << "input " << i << " must hold one value per channel ("
                         << type.getDimSize(1) << "), got " << ctx.inputType(i);
  Value normalized = standardize(ctx, ctx.input(0), 2, ctx.floatAttr("epsilon", 1e-5f));
  Value result = normalized ? scaleChannels(ctx, normalized, ctx.input(1), ctx.input(2)) : Value();
  return ctx.setResult(result);
}

LogicalResult convertGroupNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)) || failed(ctx.requireFloat(0)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t groups = ctx.intAttr("num_groups", 0);
  if (type.getRank() < 3)
    return ctx.error() << "expected an N x C x D1... input, got " << type;
  int64_t channels = type.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    return ctx.error() << "num_groups " << groups << " does not divide the " << channels
                       << " channels";
  // Opset 18 has a scale and bias per group; opset 21 per channel.
  int64_t perInput = ctx.opset() >= 21 ? channels : groups;
  for (int i : {1, 2})
    if (ctx.inputType(i).getShape() != ArrayRef<int64_t>{perInput})
      return ctx.error() << "input " << i << " must hold " << perInput << " values, got "
                         << ctx.inputType(i);
  SmallVector<int64_t> grouped = {type.getDimSize(0), groups, -1};
  grouped[2] = type.getNumElements() / std::max<int64_t>(1, type.getDimSize(0) * groups);
  Value rows = ctx.reshape(ctx.input(0), grouped);
  Value normalized = rows ? standardize(ctx, rows, 2, ctx.floatAttr("epsilon", 1e-5f)) : Value();
  Value restored = normalized ? ctx.reshape(normalized, type.getShape()) : Value();
  Value scale = ctx.input(1), bias = ctx.input(2);
  if (restored && perInput != channels) {
    // One value per group, repeated for its channels.
    Builder &b = ctx.builder();
    auto perChannel = [&](Value v) {
      Value column = ctx.reshape(v, {groups, 1});
      Value spread =
          column ? ctx.make<ExpandOp>(
                       {column},
                       {ctx.named("shape", b.getDenseI64ArrayAttr({groups, channels / groups}))})
                 : Value();
      return spread ? ctx.reshape(spread, {channels}) : Value();
    };
    scale = perChannel(scale);
    bias = scale ? perChannel(bias) : Value();
  }
  Value result = restored && scale && bias ? scaleChannels(ctx, restored, scale, bias) : Value();
  return ctx.setResult(result);
}

LogicalResult convertLpNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank(), p = ctx.intAttr("p", 2);
  std::optional<int64_t> axis = ctx.axisAttr(-1, rank);
  if (!axis)
    return failure();
  if (p != 1 && p != 2)
    return ctx.error() << "p must be 1 or 2, got " << p;
  Builder &b = ctx.builder();
  Value x = ctx.input(0);
  Value term = p == 1 ? ctx.make<AbsOp>({x}) : ctx.make<MulOp>({x, x});
  Value sum = term
                  ? ctx.make<ReduceSumOp>({term}, {ctx.named("axes", b.getDenseI64ArrayAttr(*axis)),
                                                   ctx.named("keepdims", b.getBoolAttr(true))})
                  : Value();
  Value norm = sum && p == 2 ? ctx.make<SqrtOp>({sum}) : sum;
  return norm ? ctx.emit<DivOp>({x, norm}) : failure();
}

LogicalResult convertMeanVarianceNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  SmallVector<int64_t> axes = ctx.intsAttr("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  for (int64_t &axis : axes) {
    std::optional<int64_t> normalized = normalizeAxis(axis, type.getRank());
    if (!normalized)
      return ctx.error() << "axis " << axis << " is out of range for rank " << type.getRank();
    axis = *normalized;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  // ONNX's definition: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
  Builder &b = ctx.builder();
  SmallVector<NamedAttribute> along = {ctx.named("axes", b.getDenseI64ArrayAttr(axes)),
                                       ctx.named("keepdims", b.getBoolAttr(true))};
  Value x = ctx.input(0);
  Value mean = ctx.make<ReduceMeanOp>({x}, along);
  Value square = mean ? ctx.make<MulOp>({x, x}) : Value();
  Value meanOfSquare = square ? ctx.make<ReduceMeanOp>({square}, along) : Value();
  Value squareOfMean = meanOfSquare ? ctx.make<MulOp>({mean, mean}) : Value();
  Value variance = squareOfMean ? ctx.make<SubOp>({meanOfSquare, squareOfMean}) : Value();
  Value deviation = variance ? ctx.make<SqrtOp>({variance}) : Value();
  Value epsilon = ctx.scalarConstant(type.getElementType(), 1e-9);
  Value denominator = deviation ? ctx.make<AddOp>({deviation, epsilon}) : Value();
  Value centered = denominator ? ctx.make<SubOp>({x, mean}) : Value();
  return centered ? ctx.emit<DivOp>({centered, denominator}) : failure();
}

LogicalResult convertLRN(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t size = ctx.intAttr("size", 0), rank = type.getRank();
  if (rank < 3)
    return ctx.error() << "expected an N x C x D1... input, got " << type;
  if (size <= 0)
    return ctx.error() << "size must be positive, got " << size;
  // x / (bias + alpha / size * (sum of x^2 over `size` channels around
  // each))^beta: the squares padded along the channels, then `size`
  // shifted slices added.
  Builder &b = ctx.builder();
  Type element = type.getElementType();
  Value x = ctx.input(0);
  Value square = ctx.make<MulOp>({x, x});
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[1] = (size - 1) / 2;
  pads[rank + 1] = size - 1 - (size - 1) / 2;
  Value padded =
      square
          ? ctx.make<PadOp>({square},
                            {ctx.named("pads", b.getDenseI64ArrayAttr(pads)),
                             ctx.named("mode", PadModeAttr::get(b.getContext(), PadMode::constant)),
                             ctx.named("value", b.getF64FloatAttr(0.0))})
          : Value();
  Value sum;
  for (int64_t k = 0; padded && k < size; ++k) {
    SmallVector<int64_t> starts(rank, 0), ends(type.getShape()), steps(rank, 1);
    starts[1] = k;
    ends[1] = k + type.getDimSize(1);
    Value window = ctx.make<SliceOp>({padded}, {ctx.named("starts", b.getDenseI64ArrayAttr(starts)),
                                                ctx.named("ends", b.getDenseI64ArrayAttr(ends)),
                                                ctx.named("steps", b.getDenseI64ArrayAttr(steps))});
    sum = !window ? Value() : sum ? ctx.make<AddOp>({sum, window}) : window;
    if (!sum)
      return failure();
  }
  double alpha = ctx.floatAttr("alpha", 1e-4f), beta = ctx.floatAttr("beta", 0.75f);
  Value scaled =
      sum ? ctx.make<MulOp>({sum, ctx.scalarConstant(element, alpha / double(size))}) : Value();
  Value shifted =
      scaled ? ctx.make<AddOp>({scaled, ctx.scalarConstant(element, ctx.floatAttr("bias", 1.0f))})
             : Value();
  Value power = shifted ? ctx.make<PowOp>({shifted, ctx.scalarConstant(element, beta)}) : Value();
  return power ? ctx.emit<DivOp>({x, power}) : failure();
}

} // namespace

void registerNormalizationOperators(OperatorTable &ops) {
  ops.onOp("BatchNormalization", 1, convertBatchNormalization);
  ops.onOp("GroupNormalization", 18, convertGroupNormalization);
  ops.onOp("Hardmax", 1, [](NodeContext &ctx) { return convertSoftmax(ctx, Normalize::Hardmax); });
  ops.onOp("InstanceNormalization", 1, convertInstanceNormalization);
  ops.onOp("LRN", 1, convertLRN);
  ops.onOp("LayerNormalization", 17, convertLayerNormalization);
  ops.onOp("LogSoftmax", 1,
           [](NodeContext &ctx) { return convertSoftmax(ctx, Normalize::LogSoftmax); });
  ops.onOp("LpNormalization", 1, convertLpNormalization);
  ops.onOp("MeanVarianceNormalization", 9, convertMeanVarianceNormalization);
  ops.onOp("Softmax", 1, [](NodeContext &ctx) { return convertSoftmax(ctx, Normalize::Softmax); });
  ops.takeSymbols({"BatchNormalization", "LayerNormalization", "Softmax"});
}

} // namespace kiln
