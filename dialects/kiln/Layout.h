// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Layout.h - the layouts convolutions and pooling run in ---*- C++ -*-===//

#ifndef KILN_DIALECTS_KILN_LAYOUT_H
#define KILN_DIALECTS_KILN_LAYOUT_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace kiln {

enum class Layout {
  NCHW, ///< channels first, as ONNX defines the operators
  NHWC, ///< channels last: each pixel's channels contiguous
};

/// "nchw" or "nhwc", as --layout and kiln-assign-layout spell them.
inline std::optional<Layout> parseLayout(llvm::StringRef name) {
  if (name == "nchw")
    return Layout::NCHW;
  if (name == "nhwc")
    return Layout::NHWC;
  return std::nullopt;
}

inline llvm::StringRef layoutName(Layout layout) {
  return layout == Layout::NHWC ? "nhwc" : "nchw";
}

} // namespace kiln

#endif // KILN_DIALECTS_KILN_LAYOUT_H
