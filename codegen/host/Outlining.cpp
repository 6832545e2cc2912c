// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Outlining.cpp - moving @main's kernels into functions --------------===//

#include "codegen/host/Outlining.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln::host {

using namespace mlir;

SetVector<Value> valuesFromOutside(Region &region) {
  SetVector<Value> values;
  region.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!region.isAncestor(operand.getParentRegion()))
        values.insert(operand);
  });
  return values;
}

/// Whether every use of `value` in `region` is as the byte shift of a
/// memref.view: where the plan put a buffer, which differs between
/// otherwise identical kernels.
static bool isOnlyByteShift(Value value, Region &region) {
  return llvm::all_of(value.getUses(), [&](OpOperand &use) {
    auto view = dyn_cast<memref::ViewOp>(use.getOwner());
    return !region.isAncestor(use.getOwner()->getParentRegion()) ||
           (view && use.get() == view.getByteShift() && use.getOperandNumber() == 1);
  });
}

void sinkConstantsAndViews(Region &region) {
  Block &entry = region.front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  for (bool changed = true; changed;) {
    changed = false;
    for (Value value : valuesFromOutside(region)) {
      Operation *definition = value.getDefiningOp();
      if (!definition || definition->getNumResults() != 1)
        continue;
      bool view =
          isa<memref::SubViewOp, memref::ViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(
              definition);
      if (!definition->hasTrait<OpTrait::ConstantLike>() && !(view && !isPassableBuffer(value)))
        continue;
      if (definition->hasTrait<OpTrait::ConstantLike>() && isOnlyByteShift(value, region))
        continue;
      b.setInsertionPointToStart(&entry);
      Operation *copy = b.clone(*definition);
      replaceAllUsesInRegionWith(value, copy->getResult(0), region);
      changed = true;
    }
  }
}

bool isPassableBuffer(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

bool isPassable(Value value) { return isPassableBuffer(value) || value.getType().isIntOrIndex(); }

} // namespace kiln::host
