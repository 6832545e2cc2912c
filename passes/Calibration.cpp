// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Calibration.cpp - kiln calibrate's files ---------------------------===//

#include "passes/Calibration.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

namespace kiln {

std::string parseCalibration(llvm::StringRef text, llvm::StringMap<float> &out) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return "is not JSON: " + llvm::toString(json.takeError());
  const llvm::json::Object *object = json->getAsObject();
  const llvm::json::Object *tensors = object ? object->getObject("tensors") : nullptr;
  if (!tensors)
    return "has no \"tensors\" object (write it with kiln calibrate)";
  for (const auto &[name, value] : *tensors) {
    std::optional<double> number = value.getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0 || *number > 3.4e38)
      return "gives tensor '" + name.str() + "' no finite, non-negative absolute maximum";
    out[name.str()] = float(*number);
  }
  return "";
}

std::string readCalibration(llvm::StringRef path, llvm::StringMap<float> &out) {
  std::string named = "the calibration file '" + path.str() + "' ";
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return named + "cannot be read: " + error.message();
  if (!llvm::sys::fs::is_regular_file(status))
    return named + "is not a regular file";
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return named + "cannot be read: " + buffer.getError().message();
  if (std::string error = parseCalibration((*buffer)->getBuffer(), out); !error.empty())
    return named + error;
  return "";
}

} // namespace kiln
