// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- GridSample.cpp - GridSample as gathers at computed positions -------===//
//
// GridSample reads the input at positions the grid gives at run time. Each
// spatial coordinate is denormalized (align_corners), rounded for nearest,
// and brought inside by the padding mode (border clamps, reflection
// mirrors); each interpolation tap (1 nearest, 2 linear, 4 cubic per
// dimension) then reads one pixel with kiln.gather_elements over the
// flattened spatial dimensions, zero outside the input for padding
// "zeros", and the taps are summed with their weights. This follows ONNX's
// reference (and PyTorch's grid_sample) step for step.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Shapes.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// Builds the composite's ops; every result is null once one failed (the
/// error already reported), so the arithmetic reads straight.
class Composer {
public:
  Composer(NodeContext &ctx, Type element) : ctx_(ctx), element_(element) {}

  Value number(double value) { return ctx_.scalarConstant(element_, value); }
  template <typename OpT> Value op(ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
    if (llvm::any_of(operands, [](Value v) { return !v; }))
      return {};
    return ctx_.make<OpT>(operands, attrs);
  }
  Value add(Value a, Value b) { return op<AddOp>({a, b}); }
  Value sub(Value a, Value b) { return op<SubOp>({a, b}); }
  Value mul(Value a, Value b) { return op<MulOp>({a, b}); }
  Value div(Value a, Value b) { return op<DivOp>({a, b}); }
  Value select(Value c, Value a, Value b) { return op<WhereOp>({c, a, b}); }
  Value clamp(Value x, double low, double high) {
    return op<MinOp>({op<MaxOp>({x, number(low)}), number(high)});
  }
  Value outside(Value x, double low, double high) {
    return op<OrOp>({op<LessOp>({x, number(low)}), op<GreaterOp>({x, number(high)})});
  }

  /// ONNX's reflection of `x` into [low, high], by the nearer border until
  /// inside.
  Value reflect(Value x, double low, double high) {
    double range = high - low;
    // `distance` past the border on the `belowLow` side: an even number of
    // whole ranges lands back beside that border, an odd one beside the
    // other.
    auto mirror = [&](Value distance, bool belowLow) {
      Value turns = op<FloorOp>({div(distance, number(range))});
      Value rest = sub(distance, mul(turns, number(range)));
      Value parity = op<ModOp>({turns, number(2)}, {ctx_.named("fmod", boolAttr(true))});
      Value even = op<EqualOp>({parity, number(0)});
      Value nearSide = belowLow ? add(number(low), rest) : sub(number(high), rest);
      Value farSide = belowLow ? sub(number(high), rest) : add(number(low), rest);
      return select(even, nearSide, farSide);
    };
    Value below = op<LessOp>({x, number(low)});
    Value above = op<GreaterOp>({x, number(high)});
    Value fromLow = mirror(sub(number(low), x), true);
    Value fromHigh = mirror(sub(x, number(high)), false);
    return select(below, fromLow, select(above, fromHigh, x));
  }

  Value castTo(Value v, Type to) { return v ? ctx_.castTo(v, to) : Value(); }

private:
  BoolAttr boolAttr(bool value) { return ctx_.builder().getBoolAttr(value); }

  NodeContext &ctx_;
  Type element_;
};

/// Keys' cubic convolution weights (alpha -0.75) of the four taps around a
/// coordinate `t` past the tap at offset 0.
SmallVector<Value> cubicWeights(Composer &c, Value t) {
  constexpr double a = -0.75;
  Value t1 = c.add(t, c.number(1)), s = c.sub(c.number(1), t), s1 = c.sub(c.number(2), t);
  auto outer = [&](Value x) { // ((a(x) - 5a) x + 8a) x - 4a, for 1 <= x <= 2
    Value inner = c.add(c.mul(c.sub(c.mul(c.number(a), x), c.number(5 * a)), x), c.number(8 * a));
    return c.sub(c.mul(inner, x), c.number(4 * a));
  };
  auto near = [&](Value x) { // ((a + 2) x - (a + 3)) x^2 + 1, for 0 <= x <= 1
    Value inner = c.sub(c.mul(c.number(a + 2), x), c.number(a + 3));
    return c.add(c.mul(c.mul(inner, x), x), c.number(1));
  };
  return {outer(t1), near(t), near(s), outer(s1)};
}

LogicalResult convertGridSample(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)) || failed(ctx.requireFloat(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0), gridType = ctx.inputType(1);
  int64_t rank = type.getRank(), spatial = rank - 2;
  if (rank < 3 || gridType.getRank() != rank || gridType.getDimSize(rank - 1) != spatial ||
      gridType.getDimSize(0) != type.getDimSize(0))
    return ctx.error() << "the grid " << gridType << " does not fit the input " << type
                       << ": it must be [N, out..., " << spatial << "]";
  std::string modeName = ctx.stringAttr("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  std::optional<Mode> mode = llvm::StringSwitch<std::optional<Mode>>(modeName)
                                 .Cases({"bilinear", "linear"}, Mode::Linear)
                                 .Cases({"bicubic", "cubic"}, Mode::Cubic)
                                 .Case("nearest", Mode::Nearest)
                                 .Default(std::nullopt);
  std::string paddingName = ctx.stringAttr("padding_mode", "zeros");
  std::optional<Padding> padding = llvm::StringSwitch<std::optional<Padding>>(paddingName)
                                       .Case("zeros", Padding::Zeros)
                                       .Case("border", Padding::Border)
                                       .Case("reflection", Padding::Reflection)
                                       .Default(std::nullopt);
  if (!mode)
    return ctx.error() << "mode '" << modeName << "' is not supported";
  if (!padding)
    return ctx.error() << "padding_mode '" << paddingName << "' is not supported";
  bool alignCorners = ctx.intAttr("align_corners", 0) != 0;

  Builder &b = ctx.builder();
  Type element = type.getElementType(), i64 = b.getI64Type();
  Composer c(ctx, element);
  ArrayRef<int64_t> dims = type.getShape().drop_front(2);
  int64_t n = type.getDimSize(0), channels = type.getDimSize(1), pixels = 1, outputs = 1;
  for (int64_t d : dims)
    pixels *= d;
  for (int64_t d : gridType.getShape().slice(1, spatial))
    outputs *= d;
  Value grid = ctx.reshape(ctx.castTo(ctx.input(1), element), {n, outputs, spatial});
  Value image = ctx.reshape(ctx.input(0), {n, channels, pixels});
  if (!grid || !image)
    return failure();

  // Per spatial dimension: the taps' clamped indices (i64), their weights
  // and, for padding "zeros", whether each lies inside.
  struct Taps {
    SmallVector<Value> index, weight, inside;
  };
  SmallVector<Taps> taps(spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    double size = double(dims[i]);
    // The grid's last axis lists coordinates innermost dimension first.
    Value normalized = c.op<GatherOp>({grid, ctx.scalarConstant(i64, double(spatial - 1 - i))},
                                      {ctx.named("axis", b.getI64IntegerAttr(2))});
    normalized = normalized ? ctx.reshape(normalized, {n, 1, outputs}) : Value();
    Value x = alignCorners
                  ? c.mul(c.add(normalized, c.number(1)), c.number((size - 1) / 2))
                  : c.div(c.sub(c.mul(c.add(normalized, c.number(1)), c.number(size)), c.number(1)),
                          c.number(2));
    if (*mode == Mode::Nearest)
      x = c.op<RoundOp>({x});
    double low = alignCorners ? 0 : -0.5, high = alignCorners ? size - 1 : size - 0.5;
    // PyTorch (and onnxruntime) pad the cubic taps only, each on its own;
    // ONNX's reference also clamps the coordinate under them.
    if (*padding == Padding::Border && *mode != Mode::Cubic)
      x = c.select(c.outside(x, low, high), c.clamp(x, 0, size - 1), x);
    else if (*padding == Padding::Reflection)
      x = c.reflect(x, low, high);

    Value base = *mode == Mode::Nearest ? x : c.op<FloorOp>({x});
    Value t = c.sub(x, base);
    SmallVector<int64_t> offsets;
    SmallVector<Value> weights;
    if (*mode == Mode::Nearest) {
      offsets = {0};
      weights = {Value()};
    } else if (*mode == Mode::Linear) {
      offsets = {0, 1};
      weights = {c.sub(c.number(1), t), t};
    } else {
      offsets = {-1, 0, 1, 2};
      weights = cubicWeights(c, t);
    }
    for (auto [offset, weight] : llvm::zip_equal(offsets, weights)) {
      Value at = offset ? c.add(base, c.number(double(offset))) : base;
      Value inside;
      if (*padding == Padding::Zeros)
        inside = c.op<NotOp>({c.outside(at, 0, size - 1)});
      else if (*padding == Padding::Reflection && *mode != Mode::Nearest)
        at = c.reflect(at, low, high); // the nearest is inside already
      // Truncated toward zero as ONNX's reference does, then kept inside
      // so no tap reads outside the input.
      Value index = c.castTo(c.clamp(at, 0, size - 1), i64);
      taps[i].index.push_back(index);
      taps[i].weight.push_back(weight);
      taps[i].inside.push_back(inside);
    }
  }

  // Every combination of one tap per dimension, summed with the product of
  // their weights.
  SmallVector<int64_t> choice(spatial, 0);
  Value sum;
  while (true) {
    Value flat, weight, inside;
    int64_t stride = pixels;
    for (int64_t i = 0; i < spatial; ++i) {
      stride /= dims[i];
      int64_t k = choice[i];
      Value term = stride == 1 ? taps[i].index[k]
                               : c.mul(taps[i].index[k], ctx.scalarConstant(i64, double(stride)));
      flat = flat ? c.add(flat, term) : term;
      if (Value w = taps[i].weight[k])
        weight = weight ? c.mul(weight, w) : w;
      if (Value in = taps[i].inside[k])
        inside = inside ? c.op<AndOp>({inside, in}) : in;
    }
    Value spread = c.op<ExpandOp>(
        {flat}, {ctx.named("shape", b.getDenseI64ArrayAttr({n, channels, outputs}))});
    Value value =
        c.op<GatherElementsOp>({image, spread}, {ctx.named("axis", b.getI64IntegerAttr(2))});
    if (inside)
      value = c.select(inside, value, c.number(0));
    if (weight)
      value = c.mul(value, weight);
    sum = sum ? c.add(sum, value) : value;
    int64_t i = spatial - 1;
    while (i >= 0 && ++choice[i] == int64_t(taps[i].index.size()))
      choice[i--] = 0;
    if (i < 0)
      break;
  }
  SmallVector<int64_t> shape = {n, channels};
  llvm::append_range(shape, gridType.getShape().slice(1, spatial));
  return ctx.setResult(sum ? ctx.reshape(sum, shape) : Value());
}

} // namespace

void registerGridSampleOperators(OperatorTable &ops) {
  ops.onOp("GridSample", 16, convertGridSample);
}

} // namespace kiln
