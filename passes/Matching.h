// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Matching.h - small helpers for kiln graph patterns -------*- C++ -*-===//

#ifndef KILN_PASSES_MATCHING_H
#define KILN_PASSES_MATCHING_H

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Weights.h"

#include <optional>

namespace kiln {

/// The f32 values of `value` when a kiln.constant defines it, or nothing.
inline std::optional<std::vector<float>> constantF32(mlir::Value value) {
  auto constant = value ? value.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!constant)
    return std::nullopt;
  return readF32(constant.getValue());
}

/// The value of a splat f32 kiln.constant, or nothing.
inline std::optional<float> splatF32(mlir::Value value) {
  std::optional<std::vector<float>> values = constantF32(value);
  if (!values || values->empty() ||
      llvm::any_of(*values, [&](float v) { return v != values->front(); }))
    return std::nullopt;
  return values->front();
}

/// The operand of a two-operand op other than `known`, or null when
/// `known` is not an operand.
inline mlir::Value otherOperand(mlir::Operation *op, mlir::Value known) {
  if (op->getOperand(0) == known)
    return op->getOperand(1);
  if (op->getOperand(1) == known)
    return op->getOperand(0);
  return nullptr;
}

/// The only user of `value`, or null when it has none or several uses.
inline mlir::Operation *soleUser(mlir::Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

} // namespace kiln

#endif // KILN_PASSES_MATCHING_H
