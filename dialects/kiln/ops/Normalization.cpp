// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Normalization.cpp - batch_norm, layer_norm and softmax -------------===//

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace kiln {

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 2)
    return emitOptionalError(location, "input must have a channel dimension, got ", input);
  if (input.isDynamicDim(1))
    return emitOptionalError(location, "channels must have a static size, got ", input);
  int64_t channels = input.getDimSize(1);
  for (Value param :
       {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(), adaptor.getVariance()}) {
    auto type = cast<RankedTensorType>(param.getType());
    if (type.getElementType() != input.getElementType())
      return emitOptionalError(location, "parameters must have the input's element type");
    if (type.getRank() != 1 || type.getDimSize(0) != channels)
      return emitOptionalError(location, "parameters must have shape [", channels, "], got ", type);
  }
  types.push_back(input);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = int64_t(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(location, "axis ", axis, " is out of range for ", input);
  Dims inputDims = dimsOf(input);
  ArrayRef<AffineExpr> normalized = ArrayRef(inputDims).drop_front(axis);
  for (Value param : {adaptor.getScale(), adaptor.getBias()}) {
    if (!param)
      continue;
    auto paramType = cast<RankedTensorType>(param.getType());
    if (paramType.getElementType() != input.getElementType())
      return emitOptionalError(location, "scale and bias must have the input's element type");
    auto broadcast = broadcastDims(dimsOf(paramType), normalized);
    if (!broadcast || ArrayRef<AffineExpr>(*broadcast) != normalized)
      return emitOptionalError(location, "scale and bias must broadcast to the normalized shape");
  }
  types.push_back(input);
  return success();
}

LogicalResult SoftmaxOp::verify() {
  int64_t axis = int64_t(getAxis());
  if (axis < 0 || axis >= getType().getRank())
    return emitOpError("axis ") << axis << " is out of range for " << getType();
  return success();
}

} // namespace kiln
