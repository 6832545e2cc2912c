// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Precision.h - the number formats matrix products can read -*- C++ -*-===//
//
// Precision assignment lets Conv, Gemm and MatMul read their operands in a
// narrower format than f32 while accumulating in f32, as tensor cores do.
// Operands stay f32 tensors in kiln's IR: they hold values the narrow
// format can represent (weights rounded at compile time, activations by
// kiln.round_to), so every target computes what the GPU computes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_PRECISION_H
#define KILN_DIALECTS_KILN_PRECISION_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace kiln {

enum class Precision {
  FP32, ///< f32 itself
  TF32, ///< f32's range, 10 mantissa bits
  FP16, ///< IEEE half: 5 exponent bits, 10 mantissa bits, max 65504
  BF16, ///< f32's range, 7 mantissa bits
  FP8,  ///< OCP E4M3 (FN): 4 exponent bits, 3 mantissa bits, max 448, no infinity
  /// E4M3FNUZ, the fp8 of AMD's CDNA3 (gfx940 to gfx942): exponent bias 8,
  /// max 240, one NaN and no negative zero. Each of its values is half an
  /// FP8 one (and 240).
  FP8FNUZ,
};

/// Whether `precision` is an 8-bit format, whose operands carry per-tensor
/// scales.
inline bool isFP8(Precision precision) {
  return precision == Precision::FP8 || precision == Precision::FP8FNUZ;
}

/// On a Conv, Gemm or MatMul below fp32, and on the kernels made of it: the
/// format it reads, by name.
constexpr llvm::StringLiteral kPrecisionAttr = "kiln.precision";

/// On an fp8 Conv, Gemm or MatMul, and on the product kernel made of it: the
/// scales its two operands were divided by to fit E4M3 (each operand holds
/// E4M3 values times its scale), in the order the product multiplies them.
constexpr llvm::StringLiteral kScalesAttr = "kiln.scales";

/// The largest finite value of an 8-bit format (448 for FP8, 240 for
/// FP8FNUZ), which per-tensor scales map each tensor's absolute maximum to.
float fp8Max(Precision precision);

/// "fp32", "tf32", "fp16", "bf16", "fp8" or "fp8-fnuz", as --precision
/// spells them.
std::optional<Precision> parsePrecision(llvm::StringRef name);
llvm::StringRef precisionName(Precision precision);

/// `value` rounded to the nearest value of `precision` (ties to even):
/// overflow gives infinity in FP16, saturates at the largest finite value
/// in the 8-bit formats; NaN stays NaN.
float roundTo(float value, Precision precision);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_PRECISION_H
