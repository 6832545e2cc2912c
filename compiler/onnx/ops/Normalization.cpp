//===- Normalization.cpp - BatchNormalization, LayerNormalization, Softmax ===//

#include "compiler/onnx/NodeContext.h"
#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

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

LogicalResult convertLayerNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  for (int i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.isOutputUsed(i))
      return ctx.error() << "the Mean and InvStdDev outputs are not supported";
  int64_t rank = ctx.inputType(0).getRank();
  std::optional<int64_t> axis = normalizeAxis(ctx.intAttr("axis", -1), rank);
  if (!axis)
    return ctx.error() << "axis " << ctx.intAttr("axis", -1) << " is out of range for rank "
                       << rank;
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  Builder &b = ctx.builder();
  return ctx.emit<LayerNormOp>(
      operands, {ctx.named("axis", b.getI64IntegerAttr(*axis)),
                 ctx.named("epsilon", b.getF32FloatAttr(ctx.floatAttr("epsilon", 1e-5f)))});
}

namespace {

/// Softmax of `x` along `axis`, or its logarithm: x - m - log(sum(exp(x -
/// m))) with m the maximum, which neither overflows nor takes the log of an
/// underflowed zero.
std::optional<Value> normalize(NodeContext &ctx, Value x, int64_t axis, bool log) {
  Builder &b = ctx.builder();
  auto built = [](std::optional<SmallVector<Value>> values) -> std::optional<Value> {
    return values ? std::optional<Value>(values->front()) : std::nullopt;
  };
  if (!log)
    return built(ctx.create<SoftmaxOp>({x}, {ctx.named("axis", b.getI64IntegerAttr(axis))}));
  SmallVector<NamedAttribute> along = {ctx.named("axes", b.getDenseI64ArrayAttr({axis})),
                                       ctx.named("keepdims", b.getBoolAttr(true))};
  std::optional<Value> max = built(ctx.create<ReduceMaxOp>({x}, along));
  std::optional<Value> shifted = max ? built(ctx.create<SubOp>({x, *max})) : std::nullopt;
  std::optional<Value> exp = shifted ? built(ctx.create<ExpOp>({*shifted})) : std::nullopt;
  std::optional<Value> sum = exp ? built(ctx.create<ReduceSumOp>({*exp}, along)) : std::nullopt;
  std::optional<Value> logSum = sum ? built(ctx.create<LogOp>({*sum})) : std::nullopt;
  return logSum ? built(ctx.create<SubOp>({*shifted, *logSum})) : std::nullopt;
}

} // namespace

LogicalResult convertSoftmax(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  bool log = ctx.node().op_type() == "LogSoftmax";
  if (log && failed(ctx.requireFloat(0)))
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
    std::optional<Value> result = normalize(ctx, ctx.input(0), *axis, log);
    if (!result)
      return failure();
    ctx.setOutput(0, *result);
    return success();
  }

  auto rows = elementCount(type.getShape().take_front(*axis));
  auto columns = elementCount(type.getShape().drop_front(*axis));
  if (!rows || !columns)
    return ctx.error() << "the flattened shape has too many elements";
  auto flat = ctx.create<ReshapeOp>(
      {ctx.input(0)}, {ctx.named("shape", b.getDenseI64ArrayAttr({*rows, *columns}))});
  if (!flat)
    return failure();
  std::optional<Value> normalized = normalize(ctx, flat->front(), 1, log);
  if (!normalized)
    return failure();
  return ctx.emit<ReshapeOp>({*normalized},
                             {ctx.named("shape", b.getDenseI64ArrayAttr(type.getShape()))});
}

} // namespace kiln
