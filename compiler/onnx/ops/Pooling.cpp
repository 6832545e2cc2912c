// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Pooling.cpp - pooling and reductions -------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

namespace {

/// MaxPool when `isMax`, AveragePool otherwise.
LogicalResult convertPool(NodeContext &ctx, bool isMax) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
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

/// MaxUnpool puts each value at the flat position its MaxPool index names
/// in a zero tensor of the unpooled shape: a scatter_elements over the
/// flattened output.
LogicalResult convertMaxUnpool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank(), spatial = rank - 2;
  if (rank < 3 || ctx.inputType(1).getShape() != type.getShape())
    return ctx.error() << "the indices " << ctx.inputType(1) << " must have the input's shape "
                       << type << " (of rank 3 or more)";
  std::optional<SmallVector<int64_t>> kernel = ctx.intsAttr("kernel_shape");
  if (!kernel || int64_t(kernel->size()) != spatial)
    return ctx.error() << "kernel_shape must give " << spatial << " sizes";
  SmallVector<int64_t> strides = ctx.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads = ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (int64_t(strides.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    return ctx.error() << "strides and pads must give " << spatial << " and " << 2 * spatial
                       << " values";
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(1)};
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back((type.getDimSize(d + 2) - 1) * strides[d] - pads[d] - pads[d + spatial] +
                    (*kernel)[d]);
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return ctx.error() << "the unpooled shape is empty or negative";
  Builder &b = ctx.builder();
  Type i64 = b.getI64Type();
  Value indices = ctx.castTo(ctx.input(1), i64);
  if (ctx.hasInput(2)) {
    // The indices count in the shape MaxUnpool infers; a larger given
    // shape keeps each value at the same coordinates.
    std::optional<SmallVector<int64_t>> given = ctx.constantInts(2, "output_shape");
    if (!given)
      return failure();
    if (int64_t(given->size()) != rank)
      return ctx.error() << "output_shape gives " << given->size() << " sizes for rank " << rank;
    if (*given != shape) {
      Value flat;
      int64_t from = 1, to = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        if ((*given)[d] < shape[d])
          return ctx.error() << "output_shape " << (*given)[d] << " of dimension " << d
                             << " is smaller than the unpooled " << shape[d];
        Value coordinate =
            indices ? ctx.make<DivOp>({indices, ctx.scalarConstant(i64, from)}) : Value();
        coordinate = coordinate ? ctx.make<ModOp>({coordinate, ctx.scalarConstant(i64, shape[d])},
                                                  {ctx.named("fmod", b.getBoolAttr(false))})
                                : Value();
        Value term =
            coordinate ? ctx.make<MulOp>({coordinate, ctx.scalarConstant(i64, to)}) : Value();
        flat = !term ? Value() : flat ? ctx.make<AddOp>({flat, term}) : term;
        from *= shape[d];
        to *= (*given)[d];
      }
      indices = flat;
      shape = *given;
    }
  }
  std::optional<int64_t> total = elementCount(shape), count = elementCount(type.getShape());
  if (!total)
    return ctx.error() << "the unpooled shape's element count overflows";
  Type element = type.getElementType();
  Value zeros = ctx.constant(
      DenseElementsAttr::get(RankedTensorType::get({*total}, element), b.getZeroAttr(element)));
  indices = indices ? ctx.reshape(indices, {*count}) : Value();
  Value values = ctx.reshape(ctx.input(0), {*count});
  Value placed =
      indices && values
          ? ctx.make<ScatterElementsOp>({zeros, indices, values},
                                        {ctx.named("axis", b.getI64IntegerAttr(0)),
                                         ctx.named("reduction", b.getStringAttr("none"))})
          : Value();
  return ctx.setResult(placed ? ctx.reshape(placed, shape) : Value());
}

LogicalResult convertGlobalAveragePool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  return ctx.emit<GlobalAveragePoolOp>({ctx.input(0)});
}

LogicalResult convertGlobalMaxPool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  if (rank < 3)
    return ctx.error() << "expected an N x C x D1... input, got " << ctx.inputType(0);
  Builder &b = ctx.builder();
  return ctx.emit<ReduceMaxOp>(
      {ctx.input(0)},
      {ctx.named("axes", b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(2, rank)))),
       ctx.named("keepdims", b.getBoolAttr(true))});
}

/// The reductions of ONNX, each an operator of its own.
enum class Reduction { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };

/// The reduced axes, sorted and normalized; an empty list when the node
/// reduces nothing (`noop_with_empty_axes`).
std::optional<SmallVector<int64_t>> reducedAxes(NodeContext &ctx, Reduction kind) {
  // Axes moved from an attribute to an optional input: ReduceSum in opset
  // 13, the other reductions in opset 18.
  int64_t axesAsInputSince = kind == Reduction::Sum ? 13 : 18;
  SmallVector<int64_t> axes;
  if (ctx.opset() >= axesAsInputSince) {
    if (ctx.hasInput(1)) {
      auto values = ctx.constantInts(1, "axes");
      if (!values)
        return std::nullopt;
      axes = *values;
    }
  } else if (auto values = ctx.intsAttr("axes")) {
    axes = *values;
  }

  int64_t rank = ctx.inputType(0).getRank();
  if (axes.empty()) {
    if (ctx.intAttr("noop_with_empty_axes", 0) != 0)
      return SmallVector<int64_t>();
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  for (int64_t &axis : axes) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized) {
      ctx.error() << "axis " << axis << " is out of range for rank " << rank;
      return std::nullopt;
    }
    axis = *normalized;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    ctx.error() << "axes repeat a dimension";
    return std::nullopt;
  }
  return axes;
}

/// A value or nothing, after the failure was reported.
using Built = std::optional<SmallVector<Value>>;

LogicalResult convertReduce(NodeContext &ctx, Reduction kind) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  std::optional<SmallVector<int64_t>> axes = reducedAxes(ctx, kind);
  if (!axes)
    return failure();
  Value x = ctx.input(0);
  bool keepdims = ctx.intAttr("keepdims", 1) != 0;
  Builder &b = ctx.builder();
  auto attrs = [&](bool keep) -> SmallVector<NamedAttribute> {
    return {ctx.named("axes", b.getDenseI64ArrayAttr(*axes)),
            ctx.named("keepdims", b.getBoolAttr(keep))};
  };
  bool logOrRoot =
      kind == Reduction::L2 || kind == Reduction::LogSum || kind == Reduction::LogSumExp;
  if (logOrRoot && failed(ctx.requireFloat(0)))
    return failure();

  if (axes->empty()) {
    // Nothing is reduced: the function of each element alone.
    switch (kind) {
    case Reduction::SumSquare:
      return ctx.emit<MulOp>({x, x});
    case Reduction::L1:
    case Reduction::L2:
      return ctx.emit<AbsOp>({x});
    case Reduction::LogSum:
      return ctx.emit<LogOp>({x});
    default:
      ctx.setOutput(0, x);
      return success();
    }
  }

  // The others are sums of a function of x, with a function of the sum.
  auto sumOf = [&](Built term) -> Built {
    return term ? ctx.create<ReduceSumOp>({term->front()}, attrs(keepdims)) : std::nullopt;
  };
  auto emitOf = [&](Built value) {
    if (!value)
      return failure();
    ctx.setOutput(0, value->front());
    return success();
  };
  switch (kind) {
  case Reduction::Mean:
    return ctx.emit<ReduceMeanOp>({x}, attrs(keepdims));
  case Reduction::Sum:
    return ctx.emit<ReduceSumOp>({x}, attrs(keepdims));
  case Reduction::Max:
    return ctx.emit<ReduceMaxOp>({x}, attrs(keepdims));
  case Reduction::Min:
    return ctx.emit<ReduceMinOp>({x}, attrs(keepdims));
  case Reduction::Prod:
    return ctx.emit<ReduceProdOp>({x}, attrs(keepdims));
  case Reduction::SumSquare:
    return emitOf(sumOf(ctx.create<MulOp>({x, x})));
  case Reduction::L1:
    return emitOf(sumOf(ctx.create<AbsOp>({x})));
  case Reduction::L2: {
    Built sum = sumOf(ctx.create<MulOp>({x, x}));
    return sum ? ctx.emit<SqrtOp>({sum->front()}) : failure();
  }
  case Reduction::LogSum: {
    Built sum = sumOf(Built(SmallVector<Value>{x}));
    return sum ? ctx.emit<LogOp>({sum->front()}) : failure();
  }
  case Reduction::LogSumExp:
    break;
  }

  // m + log(sum(exp(x - m))) with m the maximum: exp never overflows.
  Built max = ctx.create<ReduceMaxOp>({x}, attrs(true));
  Built shifted = max ? ctx.create<SubOp>({x, max->front()}) : std::nullopt;
  Built exp = shifted ? ctx.create<ExpOp>({shifted->front()}) : std::nullopt;
  Built sum = exp ? ctx.create<ReduceSumOp>({exp->front()}, attrs(true)) : std::nullopt;
  Built log = sum ? ctx.create<LogOp>({sum->front()}) : std::nullopt;
  Built result = log ? ctx.create<AddOp>({log->front(), max->front()}) : std::nullopt;
  if (!result)
    return failure();
  if (keepdims) {
    ctx.setOutput(0, result->front());
    return success();
  }
  SmallVector<int64_t> shape;
  for (auto [axis, size] : llvm::enumerate(ctx.inputType(0).getShape()))
    if (!llvm::is_contained(*axes, int64_t(axis)))
      shape.push_back(size);
  return ctx.emit<ReshapeOp>({result->front()},
                             {ctx.named("shape", b.getDenseI64ArrayAttr(shape))});
}

/// ArgMax when `max`, ArgMin otherwise.
LogicalResult convertArgReduce(NodeContext &ctx, bool max) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  std::optional<int64_t> axis = ctx.axisAttr(0, type.getRank());
  if (!axis)
    return failure();
  if (type.getDimSize(*axis) == 0)
    return ctx.error() << "axis " << *axis << " of " << type << " is empty: there is no "
                       << (max ? "maximum" : "minimum");
  Builder &b = ctx.builder();
  SmallVector<NamedAttribute> attrs = {
      ctx.named("axis", b.getI64IntegerAttr(*axis)),
      ctx.named("keepdims", b.getBoolAttr(ctx.intAttr("keepdims", 1) != 0)),
      ctx.named("select_last_index", b.getBoolAttr(ctx.intAttr("select_last_index", 0) != 0))};
  if (max)
    return ctx.emit<ArgMaxOp>({ctx.input(0)}, attrs);
  return ctx.emit<ArgMinOp>({ctx.input(0)}, attrs);
}

LogicalResult convertCumSum(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  auto given = ctx.constantInts(1, "axis");
  if (!given)
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  if (given->size() != 1)
    return ctx.error() << "axis must hold one value, not " << given->size();
  std::optional<int64_t> axis = normalizeAxis(given->front(), rank);
  if (!axis)
    return ctx.error() << "axis " << given->front() << " is out of range for rank " << rank;
  Builder &b = ctx.builder();
  return ctx.emit<CumSumOp>(
      {ctx.input(0)}, {ctx.named("axis", b.getI64IntegerAttr(*axis)),
                       ctx.named("exclusive", b.getBoolAttr(ctx.intAttr("exclusive", 0) != 0)),
                       ctx.named("reverse", b.getBoolAttr(ctx.intAttr("reverse", 0) != 0))});
}

} // namespace

void registerPoolingOperators(OperatorTable &ops) {
  ops.onOp("ArgMax", 1, [](NodeContext &ctx) { return convertArgReduce(ctx, true); });
  ops.onOp("ArgMin", 1, [](NodeContext &ctx) { return convertArgReduce(ctx, false); });
  ops.onOp("AveragePool", 1, [](NodeContext &ctx) { return convertPool(ctx, false); });
  ops.onOp("CumSum", 11, convertCumSum);
  ops.onOp("GlobalAveragePool", 1, convertGlobalAveragePool);
  ops.onOp("GlobalMaxPool", 1, convertGlobalMaxPool);
  ops.onOp("MaxPool", 1, [](NodeContext &ctx) { return convertPool(ctx, true); });
  ops.onOp("MaxUnpool", 9, convertMaxUnpool);
  auto reduction = [&](StringRef name, Reduction kind) {
    ops.onOp(name, 1, [kind](NodeContext &ctx) { return convertReduce(ctx, kind); });
  };
  reduction("ReduceL1", Reduction::L1);
  reduction("ReduceL2", Reduction::L2);
  reduction("ReduceLogSum", Reduction::LogSum);
  reduction("ReduceLogSumExp", Reduction::LogSumExp);
  reduction("ReduceMax", Reduction::Max);
  reduction("ReduceMean", Reduction::Mean);
  reduction("ReduceMin", Reduction::Min);
  reduction("ReduceProd", Reduction::Prod);
  reduction("ReduceSum", Reduction::Sum);
  reduction("ReduceSumSquare", Reduction::SumSquare);
  ops.takeSymbols({"AveragePool", "GlobalAveragePool", "MaxPool", "ReduceMax", "ReduceMean",
                   "ReduceMin", "ReduceProd", "ReduceSum"});
}

} // namespace kiln
