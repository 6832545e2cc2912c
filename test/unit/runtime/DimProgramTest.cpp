// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Symbolic dimensions as the manifest stores them (DimProgram.h): checked,
// evaluated and printed.

#include "runtime/format/DimProgram.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

using namespace kiln::format;

namespace {

constexpr int64_t C = int64_t(DimOp::Constant), S = int64_t(DimOp::Symbol),
                  ADD = int64_t(DimOp::Add), MUL = int64_t(DimOp::Mul),
                  FLOOR = int64_t(DimOp::FloorDiv), CEIL = int64_t(DimOp::CeilDiv),
                  MOD = int64_t(DimOp::Mod), MAX = int64_t(DimOp::Max), MIN = int64_t(DimOp::Min);

DimProgram of(const std::vector<int64_t> &words) { return {words.data(), words.size()}; }

} // namespace

TEST_CASE("dimension programs are checked before they are used", "[runtime][dims]") {
  CHECK(validDims(of({S, 0, C, 1, ADD, 0}), 1));
  CHECK(validDims(of({C, 7}), 0));
  CHECK_FALSE(validDims(of({}), 1));                   // nothing
  CHECK_FALSE(validDims(of({S, 0, C}), 1));            // half a step
  CHECK_FALSE(validDims(of({S, 1}), 1));               // a symbol the model lacks
  CHECK_FALSE(validDims(of({S, -1}), 1));              // nor a negative one
  CHECK_FALSE(validDims(of({S, 0, ADD, 0}), 1));       // an operand short
  CHECK_FALSE(validDims(of({S, 0, S, 0}), 1));         // two values left
  CHECK_FALSE(validDims(of({S, 0, C, 2, MUL, 5}), 1)); // an operator's word set
  CHECK_FALSE(validDims(of({20, 0}), 1));              // an unknown op
  std::vector<int64_t> deep;
  for (size_t i = 0; i <= kMaxDimDepth; ++i)
    deep.insert(deep.end(), {C, 1});
  for (size_t i = 0; i < kMaxDimDepth; ++i)
    deep.insert(deep.end(), {ADD, 0});
  CHECK_FALSE(validDims(of(deep), 0)); // deeper than the evaluator's stack
}

TEST_CASE("dimension programs evaluate as affine expressions do", "[runtime][dims]") {
  std::vector<int64_t> values = {7, 3};
  CHECK(evaluateDim(of({S, 0, S, 1, ADD, 0}), values) == 10);
  CHECK(evaluateDim(of({S, 0, C, 2, MUL, 0}), values) == 14);
  CHECK(evaluateDim(of({S, 0, C, 2, FLOOR, 0}), values) == 3);
  CHECK(evaluateDim(of({S, 0, C, 2, CEIL, 0}), values) == 4);
  CHECK(evaluateDim(of({C, -7, C, 2, FLOOR, 0}), values) == -4);
  CHECK(evaluateDim(of({C, -7, C, 2, CEIL, 0}), values) == -3);
  CHECK(evaluateDim(of({C, -7, C, 3, MOD, 0}), values) == 2);
  CHECK(evaluateDim(of({S, 0, S, 1, MAX, 0}), values) == 7);
  CHECK(evaluateDim(of({S, 0, S, 1, MIN, 0}), values) == 3);
  // (width - 3) floordiv 2 + 1, a window's output.
  CHECK(evaluateDim(of({S, 0, C, -3, ADD, 0, C, 2, FLOOR, 0, C, 1, ADD, 0}), values) == 3);
  // Overflow and division by zero give nothing, never a wrong size.
  CHECK_FALSE(evaluateDim(of({C, INT64_MAX, C, 1, ADD, 0}), values));
  CHECK_FALSE(evaluateDim(of({C, INT64_MAX, C, 2, MUL, 0}), values));
  CHECK_FALSE(evaluateDim(of({S, 0, C, 0, FLOOR, 0}), values));
  CHECK_FALSE(evaluateDim(of({C, INT64_MIN, C, -1, FLOOR, 0}), values));
  CHECK(bareSymbol(of({S, 1})) == 1u);
  CHECK_FALSE(bareSymbol(of({S, 1, C, 0, ADD, 0})));
  CHECK_FALSE(bareSymbol(of({C, 4})));
}

TEST_CASE("dimension programs print as their expressions", "[runtime][dims]") {
  std::vector<std::string_view> names = {"past", "seq"};
  CHECK(dimText(of({S, 0, S, 1, ADD, 0}), names) == "past + seq");
  CHECK(dimText(of({S, 0, C, -1, ADD, 0}), names) == "past - 1");
  CHECK(dimText(of({S, 0, S, 1, C, -1, MUL, 0, ADD, 0}), names) == "past - seq");
  CHECK(dimText(of({S, 0, C, -3, ADD, 0, C, 2, FLOOR, 0, C, 1, ADD, 0}), names) ==
        "(past - 3) floordiv 2 + 1");
  CHECK(dimText(of({S, 0, S, 1, MUL, 0}), names) == "past * seq");
  CHECK(dimText(of({S, 0, S, 1, ADD, 0, C, 2, MUL, 0}), names) == "(past + seq) * 2");
  CHECK(dimText(of({S, 1, C, 4, MOD, 0}), names) == "seq mod 4");
  CHECK(dimText(of({S, 0, C, 64, MUL, 0, S, 1, C, 1, ADD, 0, MAX, 0, C, 2, MUL, 0}), names) ==
        "max(past * 64, seq + 1) * 2");
  CHECK(dimText(of({S, 0, S, 1, MIN, 0}), names) == "min(past, seq)");
  // The plan's record quotes names, escaped, so that no name forges a line.
  std::vector<std::string_view> odd = {"a\"b\n"};
  CHECK(dimText(of({S, 0, C, 1, ADD, 0}), odd, /*quote=*/true) == "\"a\\\"b\\x0a\" + 1");
}
