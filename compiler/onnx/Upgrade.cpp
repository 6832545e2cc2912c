//===- Upgrade.cpp - old opsets through ONNX's version converter ----------===//

#include "compiler/onnx/Upgrade.h"

#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <exception>

namespace kiln {

std::optional<std::string> upgradeOpset(onnx::ModelProto &model, int64_t target) {
  // The converter reports what it cannot convert by throwing; nothing of it
  // escapes this function.
  try {
    // Some adapters (the broadcasting ones of opset 7) need every value's
    // shape, which older exporters did not record: infer them first, and
    // leave the converter to refuse what inference could not do.
    // Inference only adds value_info entries, so a model it gives up on
    // halfway is still the same model.
    try {
      onnx::shape_inference::InferShapes(model);
    } catch (const std::exception &) {
    }
    model = onnx::version_conversion::ConvertVersion(model, int(target));
  } catch (const std::exception &failure) {
    std::string reason = failure.what();
    // Its messages end in a newline, and may carry a source location first.
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' '))
      reason.pop_back();
    return reason.empty() ? "the converter failed without a reason" : reason;
  }
  return std::nullopt;
}

} // namespace kiln
