// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Operators.cpp - the table of supported ONNX operators --------------===//

#include "compiler/onnx/Operators.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

namespace kiln {

void OperatorTable::onOp(llvm::StringRef opType, int64_t sinceOpset, Converter convert) {
  operators_.push_back({opType.str(), sinceOpset, std::move(convert)});
}

void OperatorTable::takeSymbols(llvm::ArrayRef<llvm::StringRef> opTypes) {
  for (llvm::StringRef opType : opTypes) {
    auto it =
        llvm::find_if(operators_, [&](const OperatorInfo &info) { return info.opType == opType; });
    if (it == operators_.end())
      llvm::report_fatal_error(llvm::Twine("ONNX operator '") + opType +
                               "' takes symbols but is not registered");
    it->takesSymbols = true;
  }
}

void OperatorTable::seal() {
  llvm::sort(operators_,
             [](const OperatorInfo &a, const OperatorInfo &b) { return a.opType < b.opType; });
  for (size_t i = 1; i < operators_.size(); ++i)
    if (operators_[i].opType == operators_[i - 1].opType)
      llvm::report_fatal_error(llvm::Twine("ONNX operator '") + operators_[i].opType +
                               "' is registered twice");
}

const OperatorInfo *OperatorTable::find(llvm::StringRef opType) const {
  auto it = llvm::partition_point(
      operators_, [&](const OperatorInfo &info) { return llvm::StringRef(info.opType) < opType; });
  return it != operators_.end() && it->opType == opType ? &*it : nullptr;
}

const OperatorTable &supportedOperators() {
  static const OperatorTable table = [] {
    OperatorTable ops;
    registerConstantOperators(ops);
    registerControlFlowOperators(ops);
    registerDataMovementOperators(ops);
    registerElementwiseOperators(ops);
    registerGridSampleOperators(ops);
    registerMatmulLikeOperators(ops);
    registerNormalizationOperators(ops);
    registerPoolingOperators(ops);
    registerQuantizeOperators(ops);
    registerRecurrentOperators(ops);
    registerResizeOperators(ops);
    registerTopKOperators(ops);
    ops.seal();
    return ops;
  }();
  return table;
}

} // namespace kiln
