// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Calibration.h - kiln calibrate's files -------------------*- C++ -*-===//
//
// The file `kiln calibrate` writes and --calibration reads: JSON,
// {"tensors": {name: absolute maximum}}. Parsing depends on LLVM's Support
// library alone, so a fuzzer can drive it without a context.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CALIBRATION_H
#define KILN_PASSES_CALIBRATION_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kiln {

/// Reads a calibration file's text into `out`; fails with what is wrong
/// (a message to follow the file's name).
llvm::Error parseCalibration(llvm::StringRef text, llvm::StringMap<float> &out);

/// Reads the calibration file at `path` (a regular file) into `out`;
/// fails with a message naming the file.
llvm::Error readCalibration(llvm::StringRef path, llvm::StringMap<float> &out);

} // namespace kiln

#endif // KILN_PASSES_CALIBRATION_H
