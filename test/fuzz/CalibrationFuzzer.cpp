// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Calibration files as --calibration reads them: JSON of tensor names to
// absolute maxima, each finite and non-negative once accepted.

#include "passes/Calibration.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringMap<float> scales;
  if (llvm::Error error = kiln::parseCalibration(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), scales)) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  for (const auto &entry : scales)
    if (!std::isfinite(entry.getValue()) || entry.getValue() < 0)
      abort();
  return 0;
}
