// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checked shape arithmetic: every size may come from an untrusted model.

#include "dialects/kiln/Shapes.h"

#include <catch2/catch.hpp>

#include <limits>

using kiln::broadcastIndexMap;
using kiln::broadcastShapes;
using kiln::elementCount;
using kiln::normalizeAxis;
using kiln::windowOutputSize;
using Shape = llvm::SmallVector<int64_t>;

TEST_CASE("elementCount multiplies dimensions and rejects overflow", "[shapes]") {
  CHECK(elementCount({}) == 1);
  CHECK(elementCount({2, 3, 4}) == 24);
  CHECK(elementCount({5, 0, 7}) == 0);
  CHECK_FALSE(elementCount({-1, 4}).has_value());
  CHECK_FALSE(elementCount({int64_t(1) << 40, int64_t(1) << 40}).has_value());
  CHECK(elementCount({int64_t(1) << 31, int64_t(1) << 31}) == int64_t(1) << 62);
  CHECK_FALSE(elementCount({std::numeric_limits<int64_t>::max(), 2}).has_value());
}

TEST_CASE("broadcastShapes follows NumPy", "[shapes]") {
  CHECK(*broadcastShapes({2, 3}, {3}) == Shape{2, 3});
  CHECK(*broadcastShapes({4, 1, 5}, {3, 1}) == Shape{4, 3, 5});
  CHECK(*broadcastShapes({}, {2, 2}) == Shape{2, 2});
  CHECK(*broadcastShapes({0, 1}, {1, 7}) == Shape{0, 7});
  CHECK_FALSE(broadcastShapes({2, 3}, {4}).has_value());
  CHECK_FALSE(broadcastShapes({2, 1}, {3, 1}).has_value());
}

TEST_CASE("normalizeAxis accepts [-rank, rank)", "[shapes]") {
  CHECK(normalizeAxis(0, 3) == 0);
  CHECK(normalizeAxis(-1, 3) == 2);
  CHECK(normalizeAxis(-3, 3) == 0);
  CHECK_FALSE(normalizeAxis(3, 3).has_value());
  CHECK_FALSE(normalizeAxis(-4, 3).has_value());
}

TEST_CASE("broadcastIndexMap reads broadcast operands", "[shapes]") {
  // A row vector [3] onto [2, 3]: each row reads 0, 1, 2.
  CHECK(broadcastIndexMap({3}, {2, 3}) == Shape{0, 1, 2, 0, 1, 2});
  // A column [2, 1] onto [2, 3]: each row repeats its one element.
  CHECK(broadcastIndexMap({2, 1}, {2, 3}) == Shape{0, 0, 0, 1, 1, 1});
  CHECK(broadcastIndexMap({}, {2}) == Shape{0, 0});
}

TEST_CASE("windowOutputSize matches ONNX and PyTorch", "[shapes]") {
  // 224 with a 7x7 kernel, stride 2, pad 3: ResNet's stem.
  CHECK(windowOutputSize(224, 7, 2, 3, 3, 1, false) == 112);
  // 112 with 3x3, stride 2, pad 1: ResNet's max pool.
  CHECK(windowOutputSize(112, 3, 2, 1, 1, 1, false) == 56);
  // Dilation widens the kernel: 3 taps 2 apart span 5.
  CHECK(windowOutputSize(8, 3, 1, 0, 0, 2, false) == 4);
  // ceil_mode rounds up...
  CHECK(windowOutputSize(9, 3, 2, 0, 0, 1, true) == 4);
  CHECK(windowOutputSize(6, 3, 2, 0, 0, 1, true) == 3);
  // ...but never starts a window in the trailing padding.
  CHECK(windowOutputSize(5, 2, 2, 0, 1, 1, true) == 3);
  CHECK(windowOutputSize(4, 2, 2, 1, 1, 1, true) == 3);
  CHECK_FALSE(windowOutputSize(2, 3, 1, 0, 0, 1, false).has_value());
  CHECK_FALSE(windowOutputSize(8, 3, 0, 0, 0, 1, false).has_value());
  CHECK_FALSE(windowOutputSize(8, 3, 1, -1, 0, 1, false).has_value());
  CHECK_FALSE(
      windowOutputSize(8, std::numeric_limits<int64_t>::max(), 1, 0, 0, 2, false).has_value());
}
