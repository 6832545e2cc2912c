// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- DropEmptyBuffers.cpp - kernels over nothing, and empty arguments ---===//

#include "codegen/common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kiln {

#define GEN_PASS_DEF_DROPEMPTYBUFFERS
#include "codegen/common/Passes.h.inc"

namespace {

using namespace mlir;

bool isEmpty(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getNumElements() == 0;
}

struct DropEmptyBuffers : impl::DropEmptyBuffersBase<DropEmptyBuffers> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> idle;
    func.walk([&](linalg::LinalgOp op) {
      if (llvm::any_of(op->getOperandTypes(), isEmpty))
        idle.push_back(op);
    });
    for (Operation *op : idle)
      op->erase();
    if (func.isExternal())
      return;
    bool changed = false;
    for (BlockArgument argument : func.getArguments()) {
      auto type = dyn_cast<MemRefType>(argument.getType());
      if (type && isEmpty(type) && type.getRank() != 1 && argument.use_empty()) {
        argument.setType(MemRefType::get({0}, type.getElementType()));
        changed = true;
      }
    }
    if (changed)
      func.setType(
          FunctionType::get(&getContext(), func.front().getArgumentTypes(), func.getResultTypes()));
  }
};

} // namespace
} // namespace kiln
