// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Functions.h - operators expanded through function bodies -*- C++ -*-===//
//
// ONNX defines many operators by a function body: a small graph of simpler
// operators, fixed (MeanVarianceNormalization) or built for the node's
// attributes and input types (SoftmaxCrossEntropyLoss). Models may also
// carry functions of their own. kiln expands every node it has no converter
// for through such a body, so operators defined this way import without a
// converter each.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_FUNCTIONS_H
#define KILN_COMPILER_ONNX_FUNCTIONS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// Replaces, in `model`'s main graph, every node that `hasConverter` refuses
/// and that has a function body (a model-local function of its domain and
/// name, or the default domain's schema at `opset`) with that body's nodes,
/// again for the nodes a body brings, up to a fixed depth. Names inside a
/// body get the expanded node's name as prefix; the new nodes are named
/// "NODE/OP_TYPE:i". Fails with why a body could not be built, naming the
/// node; nodes without a body stay for the importer to report.
llvm::Error expandFunctions(onnx::ModelProto &model, int64_t opset,
                            llvm::function_ref<bool(const onnx::NodeProto &)> hasConverter);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_FUNCTIONS_H
