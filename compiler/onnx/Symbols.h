// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Symbols.h - the model's symbols while it is imported -----*- C++ -*-===//
//
// The sizes a model takes at run time, in the order the importer meets them
// in its inputs, with the ranges --input-shape gives them and the nodes
// narrow; what an expression of them can be.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_SYMBOLS_H
#define KILN_COMPILER_ONNX_SYMBOLS_H

#include "compiler/onnx/Importer.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// The model's symbols (symbol i is s_i) with their ranges, as the
/// importer meets them in the inputs and narrows them in the nodes.
struct SymbolRanges {
  std::vector<std::pair<std::string, DimRange>> symbols;
  llvm::StringMap<unsigned> index;

  /// The least and largest values `size` takes over the symbols' ranges,
  /// for sums, products by constants or of non-negative values, and
  /// divisions and remainders by positive constants; nothing for other expressions or
  /// when a bound overflows int64_t.
  std::optional<std::pair<int64_t, int64_t>> bounds(mlir::AffineExpr size) const;
  /// The symbols' names, in order, as printDim takes them.
  std::vector<std::string> names() const;
};

/// The range a symbol named `name` takes when --input-shape gives it none:
/// kDefaultSymbolRange, but from 0 for the length of a past (a name with
/// "past" in it, as `past_sequence_length`), which a prefill gives as 0.
DimRange defaultRange(llvm::StringRef name);

/// A dim_param that is an expression of other dimensions' names, as
/// exporters write a dimension computed from others
/// ("past_sequence_length + sequence_length", "2*s0", "(n - 1) // 2"):
/// integers and names (letters, digits, '_' and '.') joined by + - * and by
/// // and % with positive constants, in parentheses as needed. `name` gives
/// each name's expression. Nothing when `text` is a name alone or not such
/// an expression: then it is one symbol's name.
std::optional<mlir::AffineExpr>
parseDimExpression(llvm::StringRef text, mlir::MLIRContext *context,
                   llvm::function_ref<mlir::AffineExpr(llvm::StringRef)> name);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_SYMBOLS_H
