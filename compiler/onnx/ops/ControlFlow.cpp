// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ControlFlow.cpp - If with a condition known when compiling ---------===//
//
// An If whose condition folds to a constant (a flag, or a test on shapes,
// which are static) is replaced by the branch it takes: that branch's nodes
// are imported in place, and its outputs become the If's.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"

using namespace mlir;

namespace kiln {

namespace {

LogicalResult convertIf(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  std::optional<double> condition = ctx.constantScalar(0, "the condition");
  if (!condition)
    return failure();
  StringRef name = *condition != 0 ? "then_branch" : "else_branch";
  onnx::GraphProto *branch = nullptr;
  for (onnx::AttributeProto &attr : *ctx.mutableNode().mutable_attribute())
    if (attr.name() == name && attr.has_g())
      branch = attr.mutable_g();
  if (!branch)
    return ctx.error() << "the " << name << " attribute (a graph) is missing";
  if (branch->output_size() != ctx.numOutputs())
    return ctx.error() << "the " << name << " returns " << branch->output_size()
                       << " values for the If's " << ctx.numOutputs() << " outputs";
  FailureOr<SmallVector<Value>> results = ctx.importSubgraph(*branch);
  if (failed(results))
    return failure();
  for (auto [i, value] : llvm::enumerate(*results))
    ctx.setOutput(i, value);
  return success();
}

} // namespace

void registerControlFlowOperators(OperatorTable &ops) { ops.onOp("If", 1, convertIf); }

} // namespace kiln
