//===- Pooling.cpp - pooling and reductions -------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

LogicalResult convertPool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  bool isMax = ctx.node().op_type() == "MaxPool";
  if (isMax && ctx.isOutputUsed(1))
    return ctx.error() << "the Indices output is not supported";
  if (ctx.intAttr("storage_order", 0) != 0)
    return ctx.error() << "storage_order 1 (column-major) is not supported";
  RankedTensorType input = ctx.inputType(0);
  if (input.getRank() < 3)
    return ctx.error() << "expects an input of rank 3 or more, got " << input;
  std::optional<SmallVector<int64_t>> kernel = ctx.intsAttr("kernel_shape");
  if (!kernel)
    return ctx.error() << "attribute 'kernel_shape' is missing";
  auto window = resolveWindow(ctx, input.getShape().drop_front(2), *kernel);
  if (!window)
    return failure();
  Builder &b = ctx.builder();
  SmallVector<NamedAttribute> attrs = {
      ctx.named("kernel_shape", b.getDenseI64ArrayAttr(*kernel)),
      ctx.named("strides", b.getDenseI64ArrayAttr(window->strides)),
      ctx.named("pads", b.getDenseI64ArrayAttr(window->pads)),
      ctx.named("dilations", b.getDenseI64ArrayAttr(window->dilations)),
      ctx.named("ceil_mode", b.getBoolAttr(ctx.intAttr("ceil_mode", 0) != 0)),
      ctx.named("count_include_pad", b.getBoolAttr(ctx.intAttr("count_include_pad", 0) != 0))};
  if (isMax)
    return ctx.emit<MaxPoolOp>({ctx.input(0)}, attrs);
  return ctx.emit<AveragePoolOp>({ctx.input(0)}, attrs);
}

LogicalResult convertGlobalAveragePool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  return ctx.emit<GlobalAveragePoolOp>({ctx.input(0)});
}

LogicalResult convertReduce(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  llvm::StringRef op = ctx.node().op_type();
  // Axes moved from an attribute to an optional input: ReduceSum in opset
  // 13, the other reductions in opset 18.
  int64_t axesAsInputSince = op == "ReduceSum" ? 13 : 18;
  SmallVector<int64_t> axes;
  if (ctx.opset() >= axesAsInputSince) {
    if (ctx.hasInput(1)) {
      auto values = ctx.constantInts(1, "axes");
      if (!values)
        return failure();
      axes = *values;
    }
  } else if (auto values = ctx.intsAttr("axes")) {
    axes = *values;
  }

  int64_t rank = ctx.inputType(0).getRank();
  if (axes.empty()) {
    if (ctx.intAttr("noop_with_empty_axes", 0) != 0) {
      ctx.setOutput(0, ctx.input(0));
      return success();
    }
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  for (int64_t &axis : axes) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return ctx.error() << "axis " << axis << " is out of range for rank " << rank;
    axis = *normalized;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return ctx.error() << "axes repeat a dimension";

  Builder &b = ctx.builder();
  SmallVector<NamedAttribute> attrs = {
      ctx.named("axes", b.getDenseI64ArrayAttr(axes)),
      ctx.named("keepdims", b.getBoolAttr(ctx.intAttr("keepdims", 1) != 0))};
  if (op == "ReduceMean")
    return ctx.emit<ReduceMeanOp>({ctx.input(0)}, attrs);
  if (op == "ReduceSum")
    return ctx.emit<ReduceSumOp>({ctx.input(0)}, attrs);
  return ctx.emit<ReduceMaxOp>({ctx.input(0)}, attrs);
}

} // namespace kiln
