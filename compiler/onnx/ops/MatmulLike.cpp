//===- MatmulLike.cpp - Conv, Gemm and MatMul -----------------------------===//

#include "compiler/onnx/NodeContext.h"

using namespace mlir;

namespace kiln {

LogicalResult convertConv(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType input = ctx.inputType(0), weight = ctx.inputType(1);
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return ctx.error() << "expects input and weight of the same rank, 3 or more; got " << input
                       << " and " << weight;
  ArrayRef<int64_t> kernel = weight.getShape().drop_front(2);
  if (auto declared = ctx.intsAttr("kernel_shape"); declared && ArrayRef(*declared) != kernel)
    return ctx.error() << "kernel_shape does not match the weight's shape " << weight;
  auto window = resolveWindow(ctx, input.getShape().drop_front(2), kernel);
  if (!window)
    return failure();

  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  Builder &b = ctx.builder();
  return ctx.emit<ConvOp>(operands,
                          {ctx.named("strides", b.getDenseI64ArrayAttr(window->strides)),
                           ctx.named("pads", b.getDenseI64ArrayAttr(window->pads)),
                           ctx.named("dilations", b.getDenseI64ArrayAttr(window->dilations)),
                           ctx.named("group", b.getI64IntegerAttr(ctx.intAttr("group", 1)))});
}

LogicalResult convertGemm(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  Builder &b = ctx.builder();
  return ctx.emit<GemmOp>(operands,
                          {ctx.named("alpha", b.getF32FloatAttr(ctx.floatAttr("alpha", 1.0f))),
                           ctx.named("beta", b.getF32FloatAttr(ctx.floatAttr("beta", 1.0f))),
                           ctx.named("transA", b.getBoolAttr(ctx.intAttr("transA", 0) != 0)),
                           ctx.named("transB", b.getBoolAttr(ctx.intAttr("transB", 0) != 0))});
}

LogicalResult convertMatMul(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  return ctx.emit<MatMulOp>({ctx.input(0), ctx.input(1)});
}

} // namespace kiln
