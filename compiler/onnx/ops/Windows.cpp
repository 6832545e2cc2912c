// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Windows.cpp - strides, dilations and pads of windowed operators ----===//

#include "compiler/onnx/NodeContext.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kiln {

std::optional<WindowAttrs> resolveWindow(NodeContext &ctx, ArrayRef<int64_t> spatialSizes,
                                         ArrayRef<int64_t> kernel) {
  size_t spatial = spatialSizes.size();
  WindowAttrs window;
  window.strides = ctx.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  window.dilations = ctx.intsAttr("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  window.pads = ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (window.strides.size() != spatial || window.dilations.size() != spatial ||
      window.pads.size() != 2 * spatial || kernel.size() != spatial) {
    ctx.error() << "strides, dilations, kernel_shape and pads must match the " << spatial
                << " spatial dimensions";
    return std::nullopt;
  }
  for (size_t i = 0; i < spatial; ++i)
    if (window.strides[i] <= 0 || window.dilations[i] <= 0 || kernel[i] <= 0 ||
        window.pads[i] < 0 || window.pads[i + spatial] < 0) {
      ctx.error() << "strides, dilations and kernel sizes must be positive and "
                     "pads non-negative";
      return std::nullopt;
    }

  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return window;
  if (autoPad == "VALID") {
    window.pads.assign(2 * spatial, 0);
    return window;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    ctx.error() << "unknown auto_pad '" << autoPad << "'";
    return std::nullopt;
  }
  // SAME: the output has ceil(input / stride) elements; the odd pad goes at
  // the end (SAME_UPPER) or the beginning (SAME_LOWER).
  for (size_t i = 0; i < spatial; ++i) {
    if (ShapedType::isDynamic(spatialSizes[i])) {
      ctx.error() << "auto_pad " << autoPad << " over symbolic spatial dimension " << i
                  << " is not supported yet: its pads depend on the size";
      return std::nullopt;
    }
    int64_t out = llvm::divideCeil(spatialSizes[i], window.strides[i]);
    int64_t reach, span, needed;
    if (llvm::MulOverflow(out - 1, window.strides[i], reach) ||
        llvm::MulOverflow(kernel[i] - 1, window.dilations[i], span) ||
        llvm::AddOverflow(reach, span, needed)) {
      ctx.error() << "the window's extent overflows";
      return std::nullopt;
    }
    needed += 1 - spatialSizes[i];
    int64_t total = std::max<int64_t>(needed, 0);
    int64_t small = total / 2, large = total - small;
    window.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    window.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
  }
  return window;
}

} // namespace kiln
