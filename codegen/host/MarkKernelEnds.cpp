// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MarkKernelEnds.cpp - a call after each kernel, for timing them -----===//
//
// After each kernel of @main that kiln-list-kernels listed, a call to the
// runtime hook @kiln_kernel_end with the kernel's index in that list. The
// host code generator defines the hook after lowering: it calls the
// context's kernel_end when the runtime set one (a session that profiles)
// and does nothing else, so a kernel costs a load and a branch more.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln {

#define GEN_PASS_DEF_MARKKERNELENDS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

struct MarkKernelEnds : impl::MarkKernelEndsBase<MarkKernelEnds> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    if (module.lookupSymbol(kKernelEndHook)) {
      module.emitError() << "the module already has a symbol named " << kKernelEndHook;
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto hook = func::FuncOp::create(b, main.getLoc(), kKernelEndHook,
                                     b.getFunctionType({b.getI64Type()}, {}));
    hook.setPrivate();
    hook->setAttr(kRuntimeHookAttr, b.getUnitAttr());
    int64_t index = 0;
    for (Operation &op : llvm::make_early_inc_range(main.getBody().front())) {
      if (!kernelResult(op))
        continue;
      b.setInsertionPointAfter(&op);
      Value kernel = arith::ConstantIntOp::create(b, op.getLoc(), index++, 64);
      func::CallOp::create(b, op.getLoc(), hook, kernel);
    }
  }
};

} // namespace
} // namespace kiln
