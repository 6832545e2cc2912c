// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Weights.h - reading and making constant tensors ----------*- C++ -*-===//
//
// Graph rewrites that change weights (a BatchNormalization folded into the
// convolution before it, say) read a constant's values whatever holds them
// (dense elements or a resource blob) and make new constants the way the
// importer does: small ones inline, where folders can see them, large ones
// as resource blobs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_WEIGHTS_H
#define KILN_DIALECTS_KILN_WEIGHTS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Constants of at most this many bytes are dense elements; larger ones are
/// resource blobs.
constexpr size_t kInlineBytes = 1024;

/// The values of an f32 constant, or nothing for another element type or a
/// blob without data.
std::optional<std::vector<float>> readF32(mlir::ElementsAttr value);

/// A constant's values as dense elements, whatever holds them; null for a
/// blob without data, or with a size its type does not give.
mlir::DenseElementsAttr denseOf(mlir::ElementsAttr value);

/// An f32 constant of `type` holding `values` (as many as `type` has
/// elements); a blob is named after `name`.
mlir::ElementsAttr makeF32(mlir::RankedTensorType type, llvm::ArrayRef<float> values,
                           llvm::StringRef name);

/// The blob name for a constant made from `value`: its blob's name and
/// `.suffix` ("conv.weight.folded"), or `suffix` alone when `value` is
/// inline.
std::string derivedName(mlir::ElementsAttr value, llvm::StringRef suffix);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_WEIGHTS_H
