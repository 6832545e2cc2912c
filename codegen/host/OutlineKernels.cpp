// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- OutlineKernels.cpp - @main's kernels become functions --------------===//
//
// After kiln-outline-parallel, @main still holds, between its views and
// calls, every kernel that runs on the calling thread: loop nests, and
// linalg ops lowered to loops later. A network's worth of them make one
// function of tens of thousands of lines, and LLVM's loop passes take time
// that grows faster than the function (DenseNet-121's @main took 10 of 13
// seconds of its optimization). Here each one becomes a function of its
// own, `@main_kernel(buffers...)`, called where it was and never inlined:
// each function is optimized alone, and the plan reads as a list of calls.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Outlining.h"
#include "codegen/host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln {

#define GEN_PASS_DEF_OUTLINEKERNELS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

struct OutlineKernels : impl::OutlineKernelsBase<OutlineKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    OpBuilder b(&getContext());
    SymbolTable symbols(module);
    for (Operation &op : llvm::make_early_inc_range(main.getBody().front())) {
      if (op.getNumRegions() == 0 || op.getNumResults() != 0)
        continue;
      Location loc = op.getLoc();
      b.setInsertionPointToEnd(module.getBody());
      auto kernel = func::FuncOp::create(b, loc, (main.getName() + "_kernel").str(),
                                         b.getFunctionType({}, {}));
      Block *entry = kernel.addEntryBlock();
      b.setInsertionPointToEnd(entry);
      b.clone(op);
      func::ReturnOp::create(b, loc);
      host::sinkConstantsAndViews(kernel.getBody());
      SetVector<Value> captured = host::valuesFromOutside(kernel.getBody());
      if (!llvm::all_of(captured, host::isPassable)) {
        kernel.erase();
        continue;
      }
      for (Value value : captured)
        replaceAllUsesInRegionWith(value, entry->addArgument(value.getType(), loc),
                                   kernel.getBody());
      kernel.setType(b.getFunctionType(entry->getArgumentTypes(), {}));
      kernel.setPrivate();
      // LLVM's noinline, through the conversion to the LLVM dialect.
      kernel->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
      symbols.insert(kernel);
      b.setInsertionPoint(&op);
      func::CallOp::create(b, loc, kernel, captured.getArrayRef());
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
