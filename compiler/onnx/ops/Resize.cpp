// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Resize.cpp - Resize as gathers and weighted sums -------------------===//
//
// Resize is separable: along each resized axis, output position i reads a
// few input positions (one for nearest, two for linear, four for cubic)
// with weights that depend only on i. Shapes are static, so the importer
// computes those positions and weights as constants, and each axis becomes
// a kiln.gather per tap, scaled and summed; every target already has
// kernels for them.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Shapes.h"

#include <array>
#include <cmath>

using namespace mlir;

namespace kiln {

namespace {

enum class Mode { Nearest, Linear, Cubic };

/// What one resized axis reads: for each tap, an input position (clamped
/// into the axis) and a weight per output position, and which output
/// positions fall outside the input (tf_crop_and_resize extrapolates them).
struct AxisPlan {
  SmallVector<SmallVector<int64_t>> positions;
  SmallVector<SmallVector<double>> weights;
  SmallVector<bool> outside;
};

struct Attributes {
  Mode mode;
  std::string transform, nearest;
  double cubicA;
  bool excludeOutside;
};

/// The input coordinate of output position `x` along an axis resized from
/// `in` to `out` elements by `scale`; `roi` is the axis's (start, end) for
/// tf_crop_and_resize.
double sourceCoordinate(const std::string &transform, double x, int64_t in, int64_t out,
                        double scale, std::pair<double, double> roi) {
  if (transform == "asymmetric")
    return x / scale;
  if (transform == "align_corners")
    return out == 1 ? 0.0 : x * double(in - 1) / double(out - 1);
  if (transform == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (transform == "tf_crop_and_resize") {
    auto [start, end] = roi;
    return out > 1 ? start * double(in - 1) + x * (end - start) * double(in - 1) / double(out - 1)
                   : 0.5 * (start + end) * double(in - 1);
  }
  if (transform == "half_pixel_symmetric") {
    double adjustment = double(out) / (scale * double(in));
    double offset = double(in) / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

int64_t nearestIndex(const std::string &mode, double x) {
  if (mode == "floor")
    return int64_t(std::floor(x));
  if (mode == "ceil")
    return int64_t(std::ceil(x));
  if (mode == "round_prefer_ceil")
    return int64_t(std::floor(x + 0.5));
  return int64_t(std::ceil(x - 0.5)); // round_prefer_floor
}

/// The cubic convolution weights of the taps floor(x) - 1 .. floor(x) + 2
/// for a fraction `t` in [0, 1).
std::array<double, 4> cubicWeights(double t, double a) {
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

AxisPlan planAxis(const Attributes &attrs, int64_t in, int64_t out, double scale,
                  std::pair<double, double> roi) {
  int taps = attrs.mode == Mode::Nearest ? 1 : attrs.mode == Mode::Linear ? 2 : 4;
  AxisPlan plan;
  plan.positions.assign(taps, {});
  plan.weights.assign(taps, {});
  for (int64_t i = 0; i < out; ++i) {
    double x = sourceCoordinate(attrs.transform, double(i), in, out, scale, roi);
    plan.outside.push_back(attrs.transform == "tf_crop_and_resize" &&
                           (x < 0 || x > double(in - 1)));
    SmallVector<int64_t> at;
    SmallVector<double> w;
    if (attrs.mode == Mode::Nearest) {
      at = {nearestIndex(attrs.nearest, x)};
      w = {1.0};
    } else {
      double base = std::floor(x), t = x - base;
      if (attrs.mode == Mode::Linear) {
        at = {int64_t(base), int64_t(base) + 1};
        w = {1 - t, t};
      } else {
        at = {int64_t(base) - 1, int64_t(base), int64_t(base) + 1, int64_t(base) + 2};
        auto c = cubicWeights(t, attrs.cubicA);
        w.assign(c.begin(), c.end());
      }
    }
    if (attrs.excludeOutside) {
      // Taps outside the input get no weight; the rest share it all.
      double sum = 0;
      for (int k = 0; k < taps; ++k) {
        if (at[k] < 0 || at[k] >= in)
          w[k] = 0;
        sum += w[k];
      }
      for (double &weight : w)
        weight = sum != 0 ? weight / sum : weight;
    }
    for (int k = 0; k < taps; ++k) {
      plan.positions[k].push_back(std::clamp<int64_t>(at[k], 0, in - 1));
      plan.weights[k].push_back(w[k]);
    }
  }
  return plan;
}

/// `x` resized along `axis` by `plan`.
Value resizeAxis(NodeContext &ctx, Value x, int64_t axis, const AxisPlan &plan,
                 double extrapolation) {
  auto type = cast<RankedTensorType>(x.getType());
  Builder &b = ctx.builder();
  int64_t out = int64_t(plan.outside.size());
  SmallVector<int64_t> along(type.getRank(), 1);
  along[axis] = out;
  auto vectorOf = [&](Type element, auto values) {
    return ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get({out}, element), ArrayRef(values)));
  };
  Value sum;
  for (size_t k = 0; k < plan.positions.size(); ++k) {
    Value taken = ctx.make<GatherOp>({x, vectorOf(b.getI64Type(), plan.positions[k])},
                                     {ctx.named("axis", b.getI64IntegerAttr(axis))});
    if (!taken)
      return nullptr;
    if (plan.positions.size() > 1) {
      SmallVector<Attribute> weights;
      for (double w : plan.weights[k])
        weights.push_back(b.getFloatAttr(type.getElementType(), w));
      Value weight = ctx.constant(
          DenseElementsAttr::get(RankedTensorType::get(along, type.getElementType()), weights));
      taken = ctx.make<MulOp>({taken, weight});
    }
    sum = !taken ? Value() : sum ? ctx.make<AddOp>({sum, taken}) : taken;
    if (!sum)
      return nullptr;
  }
  if (llvm::none_of(plan.outside, [](bool o) { return o; }))
    return sum;
  SmallVector<bool> outside(plan.outside);
  Value mask = ctx.constant(
      DenseElementsAttr::get(RankedTensorType::get(along, b.getI1Type()), ArrayRef(outside)));
  return ctx.make<WhereOp>({mask, ctx.scalarConstant(type.getElementType(), extrapolation), sum});
}

LogicalResult convertResize(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  std::string modeName = ctx.stringAttr("mode", "nearest");
  Attributes attrs;
  if (modeName == "nearest")
    attrs.mode = Mode::Nearest;
  else if (modeName == "linear")
    attrs.mode = Mode::Linear;
  else if (modeName == "cubic")
    attrs.mode = Mode::Cubic;
  else
    return ctx.error() << "mode '" << modeName << "' is not nearest, linear or cubic";
  attrs.transform = ctx.stringAttr("coordinate_transformation_mode", "half_pixel");
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                           "align_corners", "asymmetric", "tf_crop_and_resize"},
                          attrs.transform))
    return ctx.error() << "coordinate_transformation_mode '" << attrs.transform
                       << "' is not supported";
  attrs.nearest = ctx.stringAttr("nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
                          attrs.nearest))
    return ctx.error() << "nearest_mode '" << attrs.nearest << "' is not supported";
  attrs.cubicA = ctx.floatAttr("cubic_coeff_a", -0.75f);
  attrs.excludeOutside = ctx.intAttr("exclude_outside", 0) != 0;
  if (ctx.intAttr("antialias", 0) != 0)
    return ctx.error() << "antialias is not supported";
  if (attrs.mode != Mode::Nearest && failed(ctx.requireFloat(0)))
    return failure();

  // The resized axes (opset 18: `axes`, else all).
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (auto given = ctx.intsAttr("axes")) {
    axes.clear();
    for (int64_t axis : *given) {
      std::optional<int64_t> normalized = normalizeAxis(axis, rank);
      if (!normalized || llvm::is_contained(axes, *normalized))
        return ctx.error() << "axis " << axis << " is out of range or repeated";
      axes.push_back(*normalized);
    }
  }
  auto present = [&](int index) {
    return ctx.hasInput(index) && ctx.inputType(index).getNumElements() > 0;
  };
  SmallVector<double> scales(axes.size(), 1.0);
  SmallVector<int64_t> sizes;
  if (present(3)) {
    auto given = ctx.constantInts(3, "sizes");
    if (!given)
      return failure();
    if (given->size() != axes.size())
      return ctx.error() << "sizes has " << given->size() << " entries for " << axes.size()
                         << " axes";
    std::string policy = ctx.stringAttr("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      return ctx.error() << "keep_aspect_ratio_policy '" << policy << "' is not supported";
    for (auto [i, axis] : llvm::enumerate(axes))
      scales[i] = double((*given)[i]) / double(type.getDimSize(axis));
    if (policy != "stretch") {
      double common =
          policy == "not_larger" ? *llvm::min_element(scales) : *llvm::max_element(scales);
      for (auto [i, axis] : llvm::enumerate(axes)) {
        scales[i] = common;
        (*given)[i] = int64_t(std::nearbyint(common * double(type.getDimSize(axis))));
      }
    }
    sizes = *given;
  } else if (present(2)) {
    auto given = ctx.constantFloats(2, "scales");
    if (!given)
      return failure();
    if (given->size() != axes.size())
      return ctx.error() << "scales has " << given->size() << " entries for " << axes.size()
                         << " axes";
    for (auto [i, axis] : llvm::enumerate(axes)) {
      if (!((*given)[i] > 0) || !std::isfinite((*given)[i]))
        return ctx.error() << "scale " << (*given)[i] << " is not a positive number";
      scales[i] = (*given)[i];
      sizes.push_back(int64_t(std::floor(double(type.getDimSize(axis)) * scales[i])));
    }
  } else {
    return ctx.error() << "neither scales nor sizes is given";
  }
  SmallVector<double> roi;
  if (attrs.transform == "tf_crop_and_resize") {
    auto given = present(1) ? ctx.constantFloats(1, "roi") : std::nullopt;
    if (!given)
      return present(1) ? failure() : ctx.error() << "tf_crop_and_resize needs roi";
    roi = *given;
    if (roi.size() != 2 * axes.size())
      return ctx.error() << "roi has " << roi.size() << " entries for " << axes.size() << " axes";
  }
  for (int64_t size : sizes)
    if (size <= 0 || size > (int64_t(1) << 24))
      return ctx.error() << "an output size of " << size << " is not supported";

  Value x = ctx.input(0);
  double extrapolation = ctx.floatAttr("extrapolation_value", 0.0f);
  // The innermost axis first, as ONNX's definition interpolates.
  for (size_t i = axes.size(); i-- > 0;) {
    int64_t axis = axes[i], in = type.getDimSize(axis);
    if (in == sizes[i] && scales[i] == 1.0 && attrs.transform != "tf_crop_and_resize")
      continue;
    if (in == 0)
      return ctx.error() << "cannot resize the empty dimension " << axis;
    std::pair<double, double> window =
        roi.empty() ? std::pair(0.0, 1.0) : std::pair(roi[i], roi[i + axes.size()]);
    x = resizeAxis(ctx, x, axis, planAxis(attrs, in, sizes[i], scales[i], window), extrapolation);
    if (!x)
      return failure();
  }
  ctx.setOutput(0, x);
  return success();
}

} // namespace

void registerResizeOperators(OperatorTable &ops) { ops.onOp("Resize", 10, convertResize); }

} // namespace kiln
