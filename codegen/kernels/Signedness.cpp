// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Signedness.cpp - unsigned integer tensors made signless ------------===//
//
// arith computes on signless integers only, and says signedness by the op
// (divui, maxui, cmpi ult, uitofp). Before the kernel generators run, every
// unsigned tensor type in the module becomes the signless type of its width
// and each kiln op whose operands or results were unsigned records which in
// `kiln.unsigned`, so its generator can choose the unsigned arith op. The
// artifact's signature was read at import and keeps the unsigned types.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace kiln {
namespace {

constexpr llvm::StringLiteral kUnsignedAttr = "kiln.unsigned";

bool isUnsigned(Type type) { return getElementTypeOrSelf(type).isUnsignedInteger(); }

Type signless(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type element = getElementTypeOrSelf(type);
  if (!element.isUnsignedInteger())
    return type;
  Type plain = IntegerType::get(type.getContext(), element.getIntOrFloatBitWidth());
  return tensor ? Type(tensor.clone(plain)) : plain;
}

/// The same elements under the signless type.
ElementsAttr signlessValue(ElementsAttr value) {
  auto type = cast<RankedTensorType>(signless(value.getShapedType()));
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.bitcast(type.getElementType());
  auto resource = cast<DenseResourceElementsAttr>(value);
  return DenseResourceElementsAttr::get(type, resource.getRawHandle());
}

} // namespace

void eraseSignedness(ModuleOp module) {
  // Every op's flags first: retyping a result changes its readers' operands.
  module.walk([](Operation *op) {
    if (!isa_and_nonnull<KilnDialect>(op->getDialect()))
      return;
    SmallVector<bool> flags;
    for (Type type : op->getOperandTypes())
      flags.push_back(isUnsigned(type));
    for (Type type : op->getResultTypes())
      flags.push_back(isUnsigned(type));
    if (llvm::is_contained(flags, true))
      op->setAttr(kUnsignedAttr, DenseBoolArrayAttr::get(op->getContext(), flags));
  });
  module.walk([](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          argument.setType(signless(argument.getType()));
    for (OpResult result : op->getResults())
      result.setType(signless(result.getType()));
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      FunctionType type = func.getFunctionType();
      func.setFunctionType(FunctionType::get(op->getContext(),
                                             llvm::map_to_vector(type.getInputs(), signless),
                                             llvm::map_to_vector(type.getResults(), signless)));
    } else if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (isUnsigned(constant.getValue().getShapedType()))
        constant.setValueAttr(signlessValue(constant.getValue()));
    } else if (auto cast = dyn_cast<CastOp>(op)) {
      cast.setTo(signless(cast.getTo()));
    }
  });
}

bool unsignedOperand(Operation *op, unsigned index) {
  auto flags = op->getAttrOfType<DenseBoolArrayAttr>(kUnsignedAttr);
  return flags && flags[index];
}

bool unsignedResult(Operation *op, unsigned index) {
  return unsignedOperand(op, op->getNumOperands() + index);
}

} // namespace kiln
