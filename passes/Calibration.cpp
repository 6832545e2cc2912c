// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Calibration.cpp - kiln calibrate's files ---------------------------===//

#include "passes/Calibration.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

namespace kiln {

llvm::Error parseCalibration(llvm::StringRef text, llvm::StringMap<float> &out) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return llvm::createStringError("is not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  const llvm::json::Object *tensors = object ? object->getObject("tensors") : nullptr;
  if (!tensors)
    return llvm::createStringError("has no \"tensors\" object (write it with kiln calibrate)");
  for (const auto &[name, value] : *tensors) {
    std::optional<double> number = value.getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0 || *number > 3.4e38)
      return llvm::createStringError("gives tensor '" + name.str() +
                                     "' no finite, non-negative absolute maximum");
    out[name.str()] = float(*number);
  }
  return llvm::Error::success();
}

llvm::Error readCalibration(llvm::StringRef path, llvm::StringMap<float> &out) {
  std::string named = "the calibration file '" + path.str() + "' ";
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return llvm::createStringError(named + "cannot be read: " + error.message());
  if (!llvm::sys::fs::is_regular_file(status))
    return llvm::createStringError(named + "is not a regular file");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(named + "cannot be read: " + buffer.getError().message());
  if (llvm::Error error = parseCalibration((*buffer)->getBuffer(), out))
    return llvm::createStringError(named + llvm::toString(std::move(error)));
  return llvm::Error::success();
}

} // namespace kiln
