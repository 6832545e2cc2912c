// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Operators.h - the ONNX operators the importer converts ---*- C++ -*-===//
//
// Every operator kiln accepts is registered once, beside its converter, by
// its family's file in ops/ (torch-mlir's `patterns.onOp(name, since, fn)`
// shape): the table is the one list of operators, the importer looks each
// node up in it, and docs/operators.md is checked against it by a test.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_OPERATORS_H
#define KILN_COMPILER_ONNX_OPERATORS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln {

class NodeContext;

/// Converts one node; returns failure after reporting an error.
using Converter = std::function<mlir::LogicalResult(NodeContext &)>;

struct OperatorInfo {
  std::string opType;
  /// The first opset of the default domain with this operator.
  int64_t sinceOpset;
  Converter convert;
  /// Whether `convert` takes inputs of symbolic shape (see takeSymbols);
  /// the importer refuses them for any other operator.
  bool takesSymbols = false;
};

class OperatorTable {
public:
  /// Registers `opType` of the default domain, which first exists in opset
  /// `sinceOpset`, converted by `convert`.
  void onOp(llvm::StringRef opType, int64_t sinceOpset, Converter convert);
  /// Marks registered operators whose converters take symbolic shapes:
  /// they build their result from the inputs' dimensions as expressions,
  /// never from a static size.
  void takeSymbols(llvm::ArrayRef<llvm::StringRef> opTypes);

  /// The operator named `opType`, or null when kiln has no converter for it.
  const OperatorInfo *find(llvm::StringRef opType) const;
  /// Every operator, sorted by name.
  llvm::ArrayRef<OperatorInfo> all() const { return operators_; }

private:
  friend const OperatorTable &supportedOperators();
  /// Sorts the table; an operator registered twice is a programming error.
  void seal();

  std::vector<OperatorInfo> operators_;
};

/// Every operator the importer accepts, registered by its family on first use.
const OperatorTable &supportedOperators();

// One registration per family file in ops/, each adding its operators.
void registerConstantOperators(OperatorTable &ops);
void registerControlFlowOperators(OperatorTable &ops);
void registerDataMovementOperators(OperatorTable &ops);
void registerElementwiseOperators(OperatorTable &ops);
void registerGridSampleOperators(OperatorTable &ops);
void registerMatmulLikeOperators(OperatorTable &ops);
void registerNormalizationOperators(OperatorTable &ops);
void registerPoolingOperators(OperatorTable &ops);
void registerQuantizeOperators(OperatorTable &ops);
void registerRecurrentOperators(OperatorTable &ops);
void registerResizeOperators(OperatorTable &ops);
void registerTopKOperators(OperatorTable &ops);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_OPERATORS_H
