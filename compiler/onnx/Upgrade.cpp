// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Upgrade.cpp - old opsets through ONNX's version converter ----------===//

#include "compiler/onnx/Upgrade.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <exception>
#include <set>
#include <vector>

namespace kiln {
namespace {

/// The first output of `graph` or of a subgraph in it that nothing defines:
/// no node, input or initializer of its graph or of a graph around it.
/// ONNX 1.12's checker lets it through, and the converter then dereferences
/// null.
std::optional<std::string> undefinedOutput(const onnx::GraphProto &graph,
                                           std::set<std::string> defined) {
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : graph.node())
    defined.insert(node.output().begin(), node.output().end());
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!defined.count(output.name()))
      return "graph '" + graph.name() + "' has output '" + output.name() +
             "', which nothing defines";
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      std::vector<const onnx::GraphProto *> subgraphs;
      if (attribute.has_g())
        subgraphs.push_back(&attribute.g());
      for (const onnx::GraphProto &subgraph : attribute.graphs())
        subgraphs.push_back(&subgraph);
      for (const onnx::GraphProto *subgraph : subgraphs)
        if (std::optional<std::string> undefined = undefinedOutput(*subgraph, defined))
          return undefined;
    }
  return std::nullopt;
}

} // namespace

llvm::Error upgradeOpset(onnx::ModelProto &model, int64_t target) {
  // The converter reports what it cannot convert by throwing; nothing of it
  // escapes this function.
  try {
    // The converter reads the graph into ONNX's IR trusting that it is
    // well formed (a graph output nothing defines makes it dereference
    // null), so it sees only models whose every output, in subgraphs too,
    // is defined, and that ONNX's checker accepts: values defined once and
    // before use, attributes of the schemas' types.
    if (std::optional<std::string> undefined = undefinedOutput(model.graph(), {}))
      return llvm::createStringError(*undefined);
    onnx::checker::check_model(model);
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
    // Its messages may carry a source location first, and a context on
    // lines of its own: one line, in kiln's diagnostics.
    std::string reason;
    for (const char *c = failure.what(); *c; ++c) {
      bool space = *c == '\n' || *c == ' ';
      if (!space)
        reason += *c;
      else if (!reason.empty() && reason.back() != ' ')
        reason += ' ';
    }
    while (!reason.empty() && reason.back() == ' ')
      reason.pop_back();
    return llvm::createStringError(reason.empty() ? "the converter failed without a reason"
                                                  : reason);
  }
  return llvm::Error::success();
}

} // namespace kiln
