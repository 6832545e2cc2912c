// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MatmulLike.cpp - Conv, ConvTranspose, Gemm and MatMul --------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Weights.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace kiln {

namespace {

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

/// ConvTranspose's weight (C x M/group x K...) as the weight of the
/// convolution that computes it (M x C/group x K...): each group's two
/// channel dimensions swapped and every kernel dimension reversed. A float
/// constant is rearranged here, once; anything else by kiln ops.
Value convolutionWeight(NodeContext &ctx, Value weight, int64_t group) {
  auto type = cast<RankedTensorType>(weight.getType());
  ArrayRef<int64_t> kernel = type.getShape().drop_front(2);
  int64_t inPerGroup = type.getDimSize(0) / group, outPerGroup = type.getDimSize(1);
  int64_t window = 1;
  for (int64_t size : kernel)
    window *= size;
  SmallVector<int64_t> shape = {group * outPerGroup, inPerGroup};
  llvm::append_range(shape, kernel);
  auto resultType = type.clone(shape);

  ElementsAttr value;
  if (matchPattern(weight, m_Constant(&value)))
    if (std::optional<std::vector<float>> source = readF32(value)) {
      std::vector<float> flipped(source->size());
      for (int64_t g = 0; g < group; ++g)
        for (int64_t o = 0; o < outPerGroup; ++o)
          for (int64_t i = 0; i < inPerGroup; ++i)
            for (int64_t k = 0; k < window; ++k)
              flipped[((g * outPerGroup + o) * inPerGroup + i) * window + (window - 1 - k)] =
                  (*source)[((g * inPerGroup + i) * outPerGroup + o) * window + k];
      return ctx.constant(makeF32(resultType, flipped, derivedName(value, "transposed")));
    }

  Builder &b = ctx.builder();
  SmallVector<int64_t> grouped = {group, inPerGroup, outPerGroup};
  llvm::append_range(grouped, kernel);
  SmallVector<int64_t> perm = {0, 2, 1};
  llvm::append_range(perm, llvm::seq<int64_t>(3, 3 + int64_t(kernel.size())));
  Value split = ctx.reshape(weight, grouped);
  Value swapped =
      split ? ctx.make<TransposeOp>({split}, {ctx.named("perm", b.getDenseI64ArrayAttr(perm))})
            : Value();
  Value merged = swapped ? ctx.reshape(swapped, shape) : Value();
  SmallVector<int64_t> starts(shape.size(), 0), ends(shape), steps(shape.size(), 1);
  for (size_t d = 2; d < shape.size(); ++d) {
    starts[d] = shape[d] - 1;
    ends[d] = -1;
    steps[d] = -1;
  }
  return merged ? ctx.make<SliceOp>({merged}, {ctx.named("starts", b.getDenseI64ArrayAttr(starts)),
                                               ctx.named("ends", b.getDenseI64ArrayAttr(ends)),
                                               ctx.named("steps", b.getDenseI64ArrayAttr(steps))})
                : Value();
}

LogicalResult convertConvTranspose(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  RankedTensorType input = ctx.inputType(0), weight = ctx.inputType(1);
  int64_t rank = input.getRank(), spatial = rank - 2, group = ctx.intAttr("group", 1);
  if (rank < 3 || weight.getRank() != rank)
    return ctx.error() << "expects input and weight of the same rank, 3 or more; got " << input
                       << " and " << weight;
  if (group <= 0 || input.getDimSize(1) != weight.getDimSize(0) ||
      weight.getDimSize(0) % group != 0)
    return ctx.error() << "weight " << weight << " does not match the " << input.getDimSize(1)
                       << " input channels in " << group << " groups";
  ArrayRef<int64_t> kernel = weight.getShape().drop_front(2);
  if (auto declared = ctx.intsAttr("kernel_shape"); declared && ArrayRef(*declared) != kernel)
    return ctx.error() << "kernel_shape does not match the weight's shape " << weight;
  auto attr = [&](StringRef name, int64_t otherwise, size_t count) {
    return ctx.intsAttr(name).value_or(SmallVector<int64_t>(count, otherwise));
  };
  SmallVector<int64_t> strides = attr("strides", 1, spatial),
                       dilations = attr("dilations", 1, spatial),
                       outputPadding = attr("output_padding", 0, spatial),
                       pads = attr("pads", 0, 2 * spatial);
  if (int64_t(strides.size()) != spatial || int64_t(dilations.size()) != spatial ||
      int64_t(outputPadding.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    return ctx.error() << "expected " << spatial << " strides, dilations and output_padding and "
                       << 2 * spatial << " pads";
  for (int64_t d = 0; d < spatial; ++d)
    if (strides[d] <= 0 || dilations[d] <= 0 || outputPadding[d] < 0 ||
        (outputPadding[d] >= strides[d] && outputPadding[d] >= dilations[d]))
      return ctx.error() << "strides and dilations must be positive, and output_padding smaller "
                            "than the stride or the dilation";

  // output_shape, or a SAME auto_pad, decide the pads.
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outputShape = ctx.intsAttr("output_shape");
  if (outputShape && int64_t(outputShape->size()) == rank)
    *outputShape = SmallVector<int64_t>(outputShape->begin() + 2, outputShape->end());
  if (!outputShape && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
    outputShape.emplace();
    for (int64_t d = 0; d < spatial; ++d)
      outputShape->push_back(input.getDimSize(d + 2) * strides[d]);
  }
  if (autoPad == "VALID")
    pads.assign(2 * spatial, 0);
  if (outputShape) {
    if (int64_t(outputShape->size()) != spatial)
      return ctx.error() << "output_shape must give the " << spatial << " spatial sizes";
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t total = strides[d] * (input.getDimSize(d + 2) - 1) + outputPadding[d] +
                      (kernel[d] - 1) * dilations[d] + 1 - (*outputShape)[d];
      // Halves round down, as ONNX's definition divides (a negative total
      // grows the output).
      int64_t half = llvm::divideFloorSigned(total, 2);
      bool upper = autoPad == "SAME_UPPER";
      pads[d] = upper ? half : total - half;
      pads[d + spatial] = upper ? total - half : half;
    }
  }

  // The input with stride - 1 zeros between its elements, padded by
  // dilation * (kernel - 1) less the pads (negative pads crop), convolved
  // with the rearranged weight at stride 1.
  Builder &b = ctx.builder();
  SmallVector<int64_t> split(input.getShape().take_front(2)), spread(split), merged(split);
  SmallVector<int64_t> gaps(2 * (2 + 2 * spatial), 0), edges(2 * rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t size = input.getDimSize(d + 2);
    split.append({size, 1});
    merged.push_back(size * strides[d]);
    gaps[2 + 2 * spatial + 3 + 2 * d] = strides[d] - 1;
    int64_t reach = dilations[d] * (kernel[d] - 1);
    edges[2 + d] = reach - pads[d];
    edges[rank + 2 + d] = reach - pads[d + spatial] + outputPadding[d] - (strides[d] - 1);
  }
  Value x = ctx.input(0);
  if (llvm::any_of(strides, [](int64_t s) { return s > 1; })) {
    x = ctx.reshape(x, split);
    x = x ? ctx.make<PadOp>({x},
                            {ctx.named("pads", b.getDenseI64ArrayAttr(gaps)),
                             ctx.named("mode", PadModeAttr::get(b.getContext(), PadMode::constant)),
                             ctx.named("value", b.getF64FloatAttr(0.0))})
          : Value();
    x = x ? ctx.reshape(x, merged) : Value();
  }
  x = x ? ctx.make<PadOp>({x},
                          {ctx.named("pads", b.getDenseI64ArrayAttr(edges)),
                           ctx.named("mode", PadModeAttr::get(b.getContext(), PadMode::constant)),
                           ctx.named("value", b.getF64FloatAttr(0.0))})
        : Value();
  Value w = x ? convolutionWeight(ctx, ctx.input(1), group) : Value();
  if (!w)
    return failure();
  SmallVector<Value> operands = {x, w};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  return ctx.emit<ConvOp>(
      operands, {ctx.named("strides", b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1))),
                 ctx.named("pads", b.getDenseI64ArrayAttr(SmallVector<int64_t>(2 * spatial, 0))),
                 ctx.named("dilations", b.getDenseI64ArrayAttr(dilations)),
                 ctx.named("group", b.getI64IntegerAttr(group))});
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

/// One Einsum operand: its value and the label of each dimension.
struct Labeled {
  Value value;
  SmallVector<int> labels;
};

/// Einsum's equation, its ellipses spelled out as labels 256 and up.
struct Equation {
  SmallVector<SmallVector<int>> inputs;
  SmallVector<int> output;
};

std::optional<Equation> parseEquation(NodeContext &ctx, StringRef text, ArrayRef<int64_t> ranks) {
  std::string compact;
  for (char c : text)
    if (c != ' ')
      compact.push_back(c);
  StringRef equation(compact);
  auto [lhs, rhs] = equation.split("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ranks.size()) {
    ctx.error() << "the equation names " << terms.size() << " operands for " << ranks.size()
                << " inputs";
    return std::nullopt;
  }
  auto letters = [](StringRef term) {
    return int64_t(term.size()) - (term.contains("...") ? 3 : 0);
  };
  // An ellipsis stands for the same trailing dimensions in every operand
  // (aligned from the right), labelled 256 and up.
  int64_t ellipsisRank = 0;
  for (auto [term, rank] : llvm::zip(terms, ranks))
    if (term.contains("..."))
      ellipsisRank = std::max(ellipsisRank, rank - letters(term));
  auto labelsOf = [&](StringRef term, int64_t span) -> std::optional<SmallVector<int>> {
    SmallVector<int> labels;
    if (span < 0 || term.count("...") > 1)
      return std::nullopt;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.substr(i).starts_with("...")) {
        for (int64_t k = 0; k < span; ++k)
          labels.push_back(int(256 + ellipsisRank - span + k));
        i += 2;
      } else if (llvm::isAlpha(term[i])) {
        labels.push_back(term[i]);
      } else {
        return std::nullopt;
      }
    }
    return labels;
  };
  Equation result;
  for (auto [term, rank] : llvm::zip(terms, ranks)) {
    auto labels = labelsOf(term, rank - letters(term));
    if (!labels || int64_t(labels->size()) != rank) {
      ctx.error() << "equation term '" << term << "' does not fit an operand of rank " << rank;
      return std::nullopt;
    }
    result.inputs.push_back(*labels);
  }
  if (equation.contains("->")) {
    auto labels = labelsOf(rhs, ellipsisRank);
    if (!labels) {
      ctx.error() << "the output term '" << rhs << "' is not letters and at most one '...'";
      return std::nullopt;
    }
    result.output = *labels;
    return result;
  }
  // Implicit output: the ellipsis, then the letters used once, in order.
  std::map<int, int> uses;
  for (auto &labels : result.inputs)
    for (int label : labels)
      ++uses[label];
  for (auto [label, count] : uses)
    if (label >= 256 || count == 1)
      result.output.push_back(label);
  return result;
}

/// Sums away the dimensions of `operand` whose labels `keep` rejects.
std::optional<Labeled> sumOut(NodeContext &ctx, Labeled operand,
                              llvm::function_ref<bool(int)> keep) {
  SmallVector<int64_t> axes;
  SmallVector<int> labels;
  for (auto [i, label] : llvm::enumerate(operand.labels)) {
    if (keep(label))
      labels.push_back(label);
    else
      axes.push_back(int64_t(i));
  }
  if (axes.empty())
    return operand;
  Builder &b = ctx.builder();
  Value sum =
      ctx.make<ReduceSumOp>({operand.value}, {ctx.named("axes", b.getDenseI64ArrayAttr(axes)),
                                              ctx.named("keepdims", b.getBoolAttr(false))});
  if (!sum)
    return std::nullopt;
  return Labeled{sum, labels};
}

/// `operand` with its dimensions in the order of `labels`.
Value permute(NodeContext &ctx, const Labeled &operand, ArrayRef<int> labels) {
  SmallVector<int64_t> perm;
  for (int label : labels)
    perm.push_back(llvm::find(operand.labels, label) - operand.labels.begin());
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return operand.value;
  return ctx.make<TransposeOp>({operand.value},
                               {ctx.named("perm", ctx.builder().getDenseI64ArrayAttr(perm))});
}

/// The product of `a` and `b` keeping the labels `keep` accepts: shared
/// kept labels batch, shared others contract, the rest stay free.
std::optional<Labeled> contract(NodeContext &ctx, const Labeled &a, const Labeled &b,
                                llvm::function_ref<bool(int)> keep,
                                const std::map<int, int64_t> &sizes) {
  SmallVector<int> batch, freeA, freeB, summed;
  for (int label : a.labels) {
    bool shared = llvm::is_contained(b.labels, label);
    (shared ? (keep(label) ? batch : summed) : freeA).push_back(label);
  }
  for (int label : b.labels)
    if (!llvm::is_contained(a.labels, label))
      freeB.push_back(label);
  auto product = [&](ArrayRef<int> labels) {
    int64_t n = 1;
    for (int label : labels)
      n *= sizes.at(label);
    return n;
  };
  SmallVector<int> orderA(batch), orderB(batch);
  orderA.append(freeA.begin(), freeA.end());
  orderA.append(summed.begin(), summed.end());
  orderB.append(summed.begin(), summed.end());
  orderB.append(freeB.begin(), freeB.end());
  Value lhs = permute(ctx, a, orderA);
  Value rhs = lhs ? permute(ctx, b, orderB) : Value();
  lhs = rhs ? ctx.reshape(lhs, {product(batch), product(freeA), product(summed)}) : Value();
  rhs = lhs ? ctx.reshape(rhs, {product(batch), product(summed), product(freeB)}) : Value();
  Value result = rhs ? ctx.make<MatMulOp>({lhs, rhs}) : Value();
  SmallVector<int> labels(batch);
  labels.append(freeA.begin(), freeA.end());
  labels.append(freeB.begin(), freeB.end());
  SmallVector<int64_t> shape;
  for (int label : labels)
    shape.push_back(sizes.at(label));
  result = result ? ctx.reshape(result, shape) : Value();
  if (!result)
    return std::nullopt;
  return Labeled{result, labels};
}

LogicalResult convertEinsum(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  SmallVector<int64_t> ranks;
  for (int i = 0; i < ctx.node().input_size(); ++i)
    ranks.push_back(ctx.inputType(i).getRank());
  std::optional<Equation> equation = parseEquation(ctx, ctx.stringAttr("equation", ""), ranks);
  if (!equation)
    return failure();
  std::map<int, int64_t> sizes;
  SmallVector<Labeled> operands;
  for (auto [i, labels] : llvm::enumerate(equation->inputs)) {
    RankedTensorType type = ctx.inputType(int(i));
    for (auto [d, label] : llvm::enumerate(labels)) {
      if (llvm::count(labels, label) > 1)
        return ctx.error() << "operand " << i
                           << " repeats a label (a diagonal), which is not "
                              "supported";
      auto [it, inserted] = sizes.try_emplace(label, type.getDimSize(d));
      if (!inserted && it->second != type.getDimSize(d))
        return ctx.error() << "a label stands for sizes " << it->second << " and "
                           << type.getDimSize(d) << " (broadcasting is not supported)";
    }
    operands.push_back({ctx.input(int(i)), labels});
  }
  for (int label : equation->output)
    if (!sizes.count(label))
      return ctx.error() << "the output names a label no operand has";

  // Left to right: each operand first sums away what nothing later needs,
  // then joins the running product.
  auto neededAfter = [&](size_t index, int label) {
    if (llvm::is_contained(equation->output, label))
      return true;
    for (size_t j = index + 1; j < operands.size(); ++j)
      if (llvm::is_contained(operands[j].labels, label))
        return true;
    return false;
  };
  std::optional<Labeled> running;
  for (size_t i = 0; i < operands.size(); ++i) {
    Labeled current = operands[i];
    if (running) {
      // Labels only this operand has, and nothing later needs, sum first.
      auto own = sumOut(ctx, current, [&](int label) {
        return neededAfter(i, label) || llvm::is_contained(running->labels, label);
      });
      if (!own)
        return failure();
      running = contract(
          ctx, *running, *own, [&](int label) { return neededAfter(i, label); }, sizes);
    } else {
      running = sumOut(ctx, current, [&](int label) { return neededAfter(0, label); });
    }
    if (!running)
      return failure();
  }
  Value result = permute(ctx, *running, equation->output);
  return ctx.setResult(result);
}

} // namespace

void registerMatmulLikeOperators(OperatorTable &ops) {
  ops.onOp("Conv", 1, convertConv);
  ops.onOp("ConvTranspose", 1, convertConvTranspose);
  ops.onOp("Einsum", 12, convertEinsum);
  ops.onOp("Gemm", 1, convertGemm);
  ops.onOp("MatMul", 1, convertMatMul);
  ops.takeSymbols({"Conv", "Gemm", "MatMul"});
}

} // namespace kiln
