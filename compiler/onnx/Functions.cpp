// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Functions.cpp - operators expanded through their function bodies ---===//

#include "compiler/onnx/Functions.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <map>
#include <unordered_map>

namespace kiln {
namespace {

/// Nested bodies (SoftmaxCrossEntropyLoss -> NegativeLogLikelihoodLoss)
/// expand one level a round; no ONNX function nests deeper than this.
constexpr int kMaxDepth = 8;

bool isDefaultDomain(const std::string &domain) { return domain.empty() || domain == "ai.onnx"; }

/// Every value's type that the graph records (inputs, initializers, outputs
/// and value_info), for bodies built from their node's input types.
std::unordered_map<std::string, onnx::TypeProto> valueTypes(const onnx::GraphProto &graph) {
  std::unordered_map<std::string, onnx::TypeProto> types;
  for (const auto *list : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &value : *list)
      if (value.has_type())
        types[value.name()] = value.type();
  for (const onnx::TensorProto &init : graph.initializer()) {
    onnx::TypeProto &type = types[init.name()];
    type.mutable_tensor_type()->set_elem_type(init.data_type());
    onnx::TensorShapeProto *shape = type.mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t dim : init.dims())
      shape->add_dim()->set_dim_value(dim);
  }
  return types;
}

/// Appends `body`'s nodes to `out` in place of `node`: the body's inputs
/// and outputs become the node's (an omitted optional input stays omitted),
/// its other values get `prefix`, and attributes that refer to the node's
/// take their values, else the default `schema` gives (or are left out, for
/// the inner operator's default).
void inlineBody(const onnx::NodeProto &node, const onnx::FunctionProto &body,
                const onnx::OpSchema *schema, const std::string &prefix, onnx::GraphProto &out) {
  std::unordered_map<std::string, std::string> renamed;
  for (int i = 0; i < body.input_size(); ++i)
    renamed[body.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < body.output_size(); ++i)
    if (i < node.output_size() && !node.output(i).empty())
      renamed[body.output(i)] = node.output(i);
  auto rename = [&](const std::string &name) {
    if (name.empty())
      return name;
    auto it = renamed.find(name);
    return it == renamed.end() ? prefix + name : it->second;
  };
  std::unordered_map<std::string, const onnx::AttributeProto *> attributes;
  if (schema)
    for (const auto &[name, declared] : schema->attributes())
      if (declared.default_value.type() != onnx::AttributeProto::UNDEFINED)
        attributes[name] = &declared.default_value;
  for (const onnx::AttributeProto &attribute : node.attribute())
    attributes[attribute.name()] = &attribute;
  for (const onnx::NodeProto &inner : body.node()) {
    onnx::NodeProto &copy = *out.add_node();
    copy = inner;
    for (std::string &input : *copy.mutable_input())
      input = rename(input);
    for (std::string &output : *copy.mutable_output())
      output = rename(output);
    copy.clear_attribute();
    for (const onnx::AttributeProto &attribute : inner.attribute()) {
      if (attribute.ref_attr_name().empty()) {
        *copy.add_attribute() = attribute;
        continue;
      }
      auto it = attributes.find(attribute.ref_attr_name());
      if (it == attributes.end())
        continue;
      onnx::AttributeProto &value = *copy.add_attribute();
      value = *it->second;
      value.set_name(attribute.name());
    }
  }
}

class Expander {
public:
  Expander(onnx::ModelProto &model, int64_t opset,
           llvm::function_ref<bool(const onnx::NodeProto &)> hasConverter)
      : model_(model), opset_(opset), hasConverter_(hasConverter) {
    for (const onnx::FunctionProto &function : model.functions())
      local_[{function.domain(), function.name()}] = &function;
  }

  std::optional<std::string> run() {
    for (int depth = 0; depth < kMaxDepth; ++depth) {
      std::optional<bool> expanded = round();
      if (!expanded)
        return error_;
      if (!*expanded)
        return std::nullopt;
    }
    return std::nullopt;
  }

private:
  /// The schema whose body expands `node`, or null.
  const onnx::OpSchema *schemaBody(const onnx::NodeProto &node) const {
    if (!isDefaultDomain(node.domain()) || hasConverter_(node))
      return nullptr;
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), int(opset_), onnx::ONNX_DOMAIN);
    if (!schema || (!schema->HasFunction() && !schema->HasContextDependentFunction()))
      return nullptr;
    return schema;
  }

  const onnx::FunctionProto *localBody(const onnx::NodeProto &node) const {
    if (isDefaultDomain(node.domain()) && hasConverter_(node))
      return nullptr;
    auto it = local_.find({node.domain(), node.op_type()});
    return it == local_.end() ? nullptr : it->second;
  }

  /// Expands every node with a body once; whether any was, or nothing
  /// after an error.
  std::optional<bool> round() {
    onnx::GraphProto &graph = *model_.mutable_graph();
    bool any = false, needTypes = false;
    for (const onnx::NodeProto &node : graph.node()) {
      const onnx::OpSchema *schema = localBody(node) ? nullptr : schemaBody(node);
      any |= localBody(node) || schema;
      needTypes |= schema && !schema->HasFunction();
    }
    if (!any)
      return false;
    std::unordered_map<std::string, onnx::TypeProto> types;
    if (needTypes) {
      // Bodies built for their inputs' types need ONNX's shape inference;
      // what it cannot infer leaves those types unknown.
      try {
        onnx::shape_inference::InferShapes(model_);
      } catch (const std::exception &) {
      }
      types = valueTypes(graph);
    }

    onnx::GraphProto expanded;
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto &node = graph.node(i);
      std::string name = node.name().empty() ? "#" + std::to_string(i) : node.name();
      onnx::FunctionProto built;
      const onnx::FunctionProto *body = localBody(node);
      const onnx::OpSchema *schema = body ? nullptr : schemaBody(node);
      if (!body) {
        if (schema) {
          if (schema->HasFunction()) {
            body = schema->GetFunction();
          } else {
            // ONNX's builders trust the types they are given (SequenceMap's
            // dereferences null for an unknown one): they see known types
            // only.
            std::vector<onnx::TypeProto> inputTypes;
            bool known = true;
            for (const std::string &input : node.input()) {
              auto it = types.find(input);
              known = known && it != types.end() &&
                      it->second.value_case() != onnx::TypeProto::VALUE_NOT_SET;
              inputTypes.push_back(it == types.end() ? onnx::TypeProto() : it->second);
            }
            onnx::FunctionBodyBuildContextImpl context(node, inputTypes);
            bool ok = false;
            try {
              ok = known && schema->BuildContextDependentFunction(context, built);
            } catch (const std::exception &) {
            }
            if (!ok) {
              error_ = "node '" + name + "' (" + node.op_type() +
                       "): ONNX could not build its function body for these inputs (their "
                       "types could not be inferred, or the body does not cover them)";
              return std::nullopt;
            }
            body = &built;
          }
        }
      }
      if (!body) {
        *expanded.add_node() = node;
        continue;
      }
      int first = expanded.node_size();
      inlineBody(node, *body, schema, name + "/", expanded);
      for (int j = first; j < expanded.node_size(); ++j) {
        onnx::NodeProto &inner = *expanded.mutable_node(j);
        inner.set_name(name + "/" + inner.op_type() + ":" + std::to_string(j - first));
      }
    }
    graph.mutable_node()->Swap(expanded.mutable_node());
    return true;
  }

  onnx::ModelProto &model_;
  int64_t opset_;
  llvm::function_ref<bool(const onnx::NodeProto &)> hasConverter_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *> local_;
  std::string error_;
};

} // namespace

llvm::Error expandFunctions(onnx::ModelProto &model, int64_t opset,
                            llvm::function_ref<bool(const onnx::NodeProto &)> hasConverter) {
  if (std::optional<std::string> why = Expander(model, opset, hasConverter).run())
    return llvm::createStringError(*why);
  return llvm::Error::success();
}

} // namespace kiln
