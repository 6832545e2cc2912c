// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Precision.cpp - the number formats matrix products can read --------===//

#include "dialects/kiln/Precision.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kiln {

std::optional<Precision> parsePrecision(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Precision>>(name)
      .Case("fp32", Precision::FP32)
      .Case("tf32", Precision::TF32)
      .Case("fp16", Precision::FP16)
      .Case("bf16", Precision::BF16)
      .Case("fp8", Precision::FP8)
      .Case("fp8-fnuz", Precision::FP8FNUZ)
      .Default(std::nullopt);
}

llvm::StringRef precisionName(Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return "fp32";
  case Precision::TF32:
    return "tf32";
  case Precision::FP16:
    return "fp16";
  case Precision::BF16:
    return "bf16";
  case Precision::FP8:
    return "fp8";
  case Precision::FP8FNUZ:
    return "fp8-fnuz";
  }
  return "fp32";
}

float fp8Max(Precision precision) { return precision == Precision::FP8FNUZ ? 240.0f : 448.0f; }

namespace {

/// Rounds away the low `bits` mantissa bits of a finite f32, to nearest even.
float dropMantissaBits(float value, int bits) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  uint32_t half = (1u << (bits - 1)) - 1, lsb = (word >> bits) & 1u;
  word = (word + half + lsb) & ~((1u << bits) - 1);
  std::memcpy(&value, &word, sizeof word);
  return value;
}

/// `magnitude` rounded to a multiple of `quantum` (a power of two small
/// enough that the multiples are exact), to nearest even.
float roundToQuantum(float magnitude, float quantum) {
  return std::nearbyint(magnitude / quantum) * quantum;
}

} // namespace

float roundTo(float value, Precision precision) {
  if (std::isnan(value) || precision == Precision::FP32)
    return value;
  float magnitude = std::fabs(value), rounded = magnitude;
  switch (precision) {
  case Precision::FP32:
    return value;
  case Precision::TF32:
    rounded = std::isinf(magnitude) ? magnitude : dropMantissaBits(magnitude, 13);
    break;
  case Precision::BF16:
    rounded = std::isinf(magnitude) ? magnitude : dropMantissaBits(magnitude, 16);
    break;
  case Precision::FP16:
    // Halfway between 65504 and the next step (65536) rounds to infinity.
    if (magnitude >= 65520.0f)
      rounded = INFINITY;
    else if (magnitude < 0x1p-14f) // subnormal: steps of 2^-24
      rounded = roundToQuantum(magnitude, 0x1p-24f);
    else
      rounded = dropMantissaBits(magnitude, 13);
    break;
  case Precision::FP8:
  case Precision::FP8FNUZ: {
    // Below the smallest normal value (2^-6, or 2^-7 with FNUZ's bias of
    // 8) the subnormals step by an eighth of it.
    float smallestNormal = precision == Precision::FP8 ? 0x1p-6f : 0x1p-7f;
    magnitude = std::fmin(magnitude, fp8Max(precision));
    if (magnitude < smallestNormal)
      rounded = roundToQuantum(magnitude, smallestNormal / 8);
    else
      rounded = dropMantissaBits(magnitude, 20);
    break;
  }
  }
  return std::copysign(rounded, value);
}

} // namespace kiln
