// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A symbolic dimension as the manifest stores it: an expression of the
// model's symbols (the sizes it takes at run time) as a program in
// postfix, two words a step:
//
//   (Constant, v)   push v
//   (Symbol, i)     push the value of symbol i
//   (Add, 0) (Mul, 0) (FloorDiv, 0) (CeilDiv, 0) (Mod, 0) (Max, 0) (Min, 0)
//                   pop b, pop a, push a op b
//
// `past + 1` with symbols [past] is {Symbol, 0, Constant, 1, Add, 0}. The
// divisions round toward minus and plus infinity and the remainder is never
// negative, as MLIR's affine expressions (which the compiler writes these
// from) define them. Max and Min take the larger and smaller of two (a GPU
// plan's buffer offsets, which lie above every buffer they overlap). The compiler writes programs,
// the runtime checks and evaluates them, and both print them for the plan's record.

#ifndef KILN_RUNTIME_FORMAT_DIMPROGRAM_H
#define KILN_RUNTIME_FORMAT_DIMPROGRAM_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::format {

enum class DimOp : int64_t { Constant, Symbol, Add, Mul, FloorDiv, CeilDiv, Mod, Max, Min };

/// The most values a program may hold at once (validDims refuses more).
constexpr size_t kMaxDimDepth = 16;

/// A program's words, as the manifest's vector holds them.
struct DimProgram {
  const int64_t *words = nullptr;
  size_t size = 0;
};

/// Whether `program` is well formed over `symbols` symbols: whole steps of
/// known ops, each with its operands, never more than kMaxDimDepth values
/// at once, leaving one.
bool validDims(DimProgram program, size_t symbols);

/// The value of a valid `program` at `values` (one per symbol); nothing
/// when a step overflows int64_t or divides by zero.
std::optional<int64_t> evaluateDim(DimProgram program, const std::vector<int64_t> &values);

/// The symbol a valid `program` is by itself ({Symbol, i}), if it is one.
std::optional<size_t> bareSymbol(DimProgram program);

/// A valid `program` as text, symbols by their `names`: `past + 1`,
/// `(width - 3) floordiv 2 + 1`; with `quote`, each name quoted as the
/// plan's record quotes names (`"past" + 1`).
std::string dimText(DimProgram program, const std::vector<std::string_view> &names,
                    bool quote = false);

/// `name` in double quotes, with quotes, backslashes and every byte outside
/// printable ASCII escaped, so that no name can forge a record's line.
std::string quoted(std::string_view name);

} // namespace kiln::format

#endif // KILN_RUNTIME_FORMAT_DIMPROGRAM_H
