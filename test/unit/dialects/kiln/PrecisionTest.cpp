// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rounding to the 8-bit formats, against every value each format has.

#include "dialects/kiln/Precision.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using kiln::Precision;
using kiln::roundTo;

namespace {

/// The finite non-negative values of an E4M3 format, ascending: exponent
/// bias 7 and 0x7F NaN (E4M3FN), or bias 8 with every code below 0x80
/// finite (E4M3FNUZ).
std::vector<float> e4m3Values(Precision format) {
  int bias = format == Precision::FP8 ? 7 : 8;
  std::vector<float> values;
  for (int code = 0; code < (format == Precision::FP8 ? 0x7F : 0x80); ++code) {
    int exponent = code >> 3, mantissa = code & 7;
    values.push_back(exponent == 0 ? std::ldexp(mantissa / 8.0f, 1 - bias)
                                   : std::ldexp(1.0f + mantissa / 8.0f, exponent - bias));
  }
  return values;
}

void checkFormat(Precision format, float largest) {
  std::vector<float> values = e4m3Values(format);
  REQUIRE(values.back() == largest);
  CHECK(kiln::fp8Max(format) == largest);
  for (size_t i = 0; i < values.size(); ++i) {
    CAPTURE(values[i]);
    CHECK(roundTo(values[i], format) == values[i]);
    CHECK(roundTo(-values[i], format) == -values[i]);
    if (i + 1 == values.size())
      break;
    // Between two neighbours: the nearer, and at the midpoint the one with
    // the even code.
    float low = values[i], high = values[i + 1], middle = (low + high) / 2;
    CHECK(roundTo(std::nextafter(middle, low), format) == low);
    CHECK(roundTo(std::nextafter(middle, high), format) == high);
    CHECK(roundTo(middle, format) == (i % 2 == 0 ? low : high));
  }
  // Saturation, and NaN.
  CHECK(roundTo(largest * 1.5f, format) == largest);
  CHECK(roundTo(-INFINITY, format) == -largest);
  CHECK(std::isnan(roundTo(NAN, format)));
}

} // namespace

TEST_CASE("fp8 rounds to E4M3FN: 448 at most, subnormals of 2^-9", "[precision]") {
  checkFormat(Precision::FP8, 448.0f);
  CHECK(roundTo(0x1p-9f, Precision::FP8) == 0x1p-9f);
  CHECK(roundTo(0x1p-10f, Precision::FP8) == 0.0f);
}

TEST_CASE("fp8-fnuz rounds to E4M3FNUZ: 240 at most, subnormals of 2^-10", "[precision]") {
  checkFormat(Precision::FP8FNUZ, 240.0f);
  CHECK(roundTo(0x1p-10f, Precision::FP8FNUZ) == 0x1p-10f);
  CHECK(roundTo(0x1p-11f, Precision::FP8FNUZ) == 0.0f);
  CHECK(*kiln::parsePrecision("fp8-fnuz") == Precision::FP8FNUZ);
  CHECK(kiln::precisionName(Precision::FP8FNUZ) == "fp8-fnuz");
  CHECK(kiln::isFP8(Precision::FP8FNUZ));
  CHECK_FALSE(kiln::isFP8(Precision::BF16));
}
