//===- Operators.cpp - the table of supported ONNX operators --------------===//

#include "compiler/onnx/NodeContext.h"

namespace kiln {

llvm::ArrayRef<OperatorInfo> supportedOperators() {
  // Sorted by name for findOperator's binary search and docs/operators.md.
  static const OperatorInfo operators[] = {
      {"Add", 1, convertElementwise},
      {"AveragePool", 1, convertPool},
      {"BatchNormalization", 1, convertBatchNormalization},
      {"Cast", 1, convertCast},
      {"Clip", 1, convertClip},
      {"Concat", 1, convertConcat},
      {"Constant", 1, convertConstant},
      {"ConstantOfShape", 9, convertConstantOfShape},
      {"Conv", 1, convertConv},
      {"Div", 1, convertElementwise},
      {"Dropout", 1, convertDropout},
      {"Equal", 1, convertElementwise},
      {"Erf", 9, convertElementwise},
      {"Exp", 1, convertElementwise},
      {"Expand", 8, convertExpand},
      {"Flatten", 1, convertFlatten},
      {"Gather", 1, convertGather},
      {"Gelu", 20, convertElementwise},
      {"Gemm", 1, convertGemm},
      {"GlobalAveragePool", 1, convertGlobalAveragePool},
      {"HardSigmoid", 1, convertElementwise},
      {"HardSwish", 14, convertElementwise},
      {"Identity", 1, convertIdentity},
      {"LayerNormalization", 17, convertLayerNormalization},
      {"LeakyRelu", 1, convertElementwise},
      {"MatMul", 1, convertMatMul},
      {"MaxPool", 1, convertPool},
      {"Mul", 1, convertElementwise},
      {"Pad", 1, convertPad},
      {"Pow", 1, convertElementwise},
      {"ReduceMax", 1, convertReduce},
      {"ReduceMean", 1, convertReduce},
      {"ReduceSum", 1, convertReduce},
      {"Relu", 1, convertElementwise},
      {"Reshape", 1, convertReshape},
      {"Shape", 1, convertShape},
      {"Sigmoid", 1, convertElementwise},
      {"Slice", 1, convertSlice},
      {"Softmax", 1, convertSoftmax},
      {"Split", 1, convertSplit},
      {"Sqrt", 1, convertElementwise},
      {"Squeeze", 1, convertSqueeze},
      {"Sub", 1, convertElementwise},
      {"Tanh", 1, convertElementwise},
      {"Transpose", 1, convertTranspose},
      {"Unsqueeze", 1, convertUnsqueeze},
      {"Where", 9, convertElementwise},
  };
  return operators;
}

const OperatorInfo *findOperator(llvm::StringRef opType) {
  llvm::ArrayRef<OperatorInfo> all = supportedOperators();
  auto it = llvm::partition_point(
      all, [&](const OperatorInfo &info) { return llvm::StringRef(info.opType) < opType; });
  return it != all.end() && it->opType == opType ? it : nullptr;
}

} // namespace kiln
