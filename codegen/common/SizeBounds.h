// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- SizeBounds.h - the range of a size computed from symbols -*- C++ -*-===//
//
// From kernel generation on, a symbolic size is index arithmetic on @main's
// symbol arguments (see kSymbolArgAttr), whose ranges the module's
// kiln.symbols gives. A memory plan needs each buffer's largest size: the
// bounds here follow the arithmetic interval by interval.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_COMMON_SIZEBOUNDS_H
#define KILN_CODEGEN_COMMON_SIZEBOUNDS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <utility>

namespace kiln {

/// The least and largest values of the index `size` in any run: from
/// constants, the symbol arguments' ranges, the static sizes of tensors and
/// buffers, the arithmetic expandAffineExpr writes (add, sub, mul,
/// divisions and remainders by positive constants, select, min, max) and
/// the memory plan's (unsigned max, rounding down to a power of two).
/// Nothing for anything else, or when a bound overflows int64_t.
std::optional<std::pair<int64_t, int64_t>> sizeBounds(mlir::Value size);

/// The most bytes a buffer of `type` takes in any run, its dynamic sizes
/// being `dynamicSizes` (in order; each bounded by sizeBounds, and never
/// negative). Nothing when a size has no bound or the bytes overflow.
std::optional<int64_t> largestBytes(mlir::MemRefType type, mlir::ValueRange dynamicSizes);

} // namespace kiln

#endif // KILN_CODEGEN_COMMON_SIZEBOUNDS_H
