// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- SkipKeptKernels.cpp - kernels of the sizes alone, once a shape -----===//
//
// The kernels kiln-keep-size-values marked compute from the sizes alone
// into buffers that keep their values from run to run. Here they run only
// when a run's sizes differ from those the arena's header says the kept
// buffers hold (or no run has written the header: the runtime maps the
// arena zeroed):
//
//   %stale = header[0] != 1 || header[1] != sym0 || ...
//   scf.if %stale { <kernel i's calls and loops>; kiln_kernel_end(i) }
//   ...
//   scf.if %stale { header[0] = 1; header[1] = sym0; ... }
//
// By now @main is views, sizes, calls and loop nests, with the hook
// kiln-mark-kernel-ends put after each kernel: kernel i is what lies
// between the hooks of kernels i - 1 and i.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"
#include "dialects/kiln/Dims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {

#define GEN_PASS_DEF_SKIPKEPTKERNELS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// The index of the kernel whose end `op` marks, if it is a call of the
/// hook (given the runtime's context first, by kiln-outline-parallel).
std::optional<int64_t> endOf(Operation &op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call || call.getCallee() != kKernelEndHook || call.getNumOperands() == 0)
    return std::nullopt;
  return getConstantIntValue(call.getOperands().back());
}

struct SkipKeptKernels : impl::SkipKeptKernelsBase<SkipKeptKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    auto list = module->getAttrOfType<ArrayAttr>(kKernelsAttr);
    if (!main || main.isExternal() || !list)
      return;
    llvm::BitVector sizesOnly(list.size());
    for (auto [index, kernel] : llvm::enumerate(list.getAsRange<DictionaryAttr>()))
      if (kernel.get(kSizesOnlyKey))
        sizesOnly.set(index);
    if (sizesOnly.none())
      return;

    // Each marked kernel's ops: those without results, between the hook
    // before it and its own (included).
    Block &body = main.front();
    SmallVector<SmallVector<Operation *>> spans(list.size());
    SmallVector<Operation *> span;
    bool reads = false; // whether an op of the span with results touches memory
    for (Operation &op : body) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        break;
      // A kernel is calls (of its function, of its tasks, of the hook),
      // loop nests and linalg ops; an op that only stores a size into a
      // buffer is none, and stays.
      if (op.getNumResults() == 0 && (isa<func::CallOp>(op) || op.getNumRegions() != 0))
        span.push_back(&op);
      else if (op.getNumResults() != 0)
        reads |= !isMemoryEffectFree(&op);
      std::optional<int64_t> end = endOf(op);
      if (!end)
        continue;
      if (*end < 0 || *end >= int64_t(list.size())) {
        op.emitError("a kernel's end hook names kernel ")
            << *end << " of " << list.size() << " listed";
        return signalPassFailure();
      }
      if (sizesOnly.test(*end)) {
        // A value read from memory outside the guard would be read in
        // every run: the kernels stay as they are, all of them.
        if (reads)
          return;
        spans[*end] = std::move(span);
      }
      span.clear();
      reads = false;
    }

    for (unsigned kernel : sizesOnly.set_bits())
      if (spans[kernel].empty()) {
        main.emitError("kernel ") << kernel << " computes from the sizes alone but has no end hook";
        return signalPassFailure();
      }

    // The sizes the kept buffers were computed at, in the arena's header.
    Value arena;
    SmallVector<Value> symbols;
    for (BlockArgument argument : body.getArguments()) {
      if (main.getArgAttr(argument.getArgNumber(), "kiln.arena"))
        arena = argument;
      if (main.getArgAttr(argument.getArgNumber(), kSymbolArgAttr))
        symbols.push_back(argument);
    }
    if (!arena) {
      main.emitError("@main has no arena argument for the kept buffers");
      return signalPassFailure();
    }
    Location loc = main.getLoc();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    auto index = [&](int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); };
    auto headerType = MemRefType::get({int64_t(1 + symbols.size())}, b.getI64Type());
    Value header = memref::ViewOp::create(b, loc, headerType, arena, index(0), ValueRange{});
    SmallVector<Value> values = {arith::ConstantIntOp::create(b, loc, 1, 64)};
    for (Value symbol : symbols)
      values.push_back(symbol.getType().isIndex()
                           ? arith::IndexCastOp::create(b, loc, b.getI64Type(), symbol).getResult()
                           : symbol);
    // Only the symbols the kept values are computed from (and the flag)
    // are compared and recorded; each keeps its slot.
    SmallVector<bool> compared = {true};
    for (Value symbol : symbols)
      compared.push_back(
          bool(main.getArgAttr(cast<BlockArgument>(symbol).getArgNumber(), kKeptSizesAttr)));
    Value stale = arith::ConstantIntOp::create(b, loc, 0, 1);
    for (auto [slot, value] : llvm::enumerate(values)) {
      if (!compared[slot])
        continue;
      Value held = memref::LoadOp::create(b, loc, header, ValueRange{index(int64_t(slot))});
      stale = arith::OrIOp::create(
          b, loc, stale,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, held, value).getResult());
    }

    for (SmallVector<Operation *> &ops : spans) {
      if (ops.empty())
        continue;
      b.setInsertionPointAfter(ops.back());
      auto guard = scf::IfOp::create(b, loc, stale, /*withElseRegion=*/false);
      Operation *yield = guard.thenBlock()->getTerminator();
      for (Operation *op : ops)
        op->moveBefore(yield);
    }
    b.setInsertionPoint(body.getTerminator());
    auto write = scf::IfOp::create(b, loc, stale, /*withElseRegion=*/false);
    b.setInsertionPoint(write.thenBlock()->getTerminator());
    for (auto [slot, value] : llvm::enumerate(values))
      if (compared[slot])
        memref::StoreOp::create(b, loc, value, header, ValueRange{index(int64_t(slot))});
  }
};

} // namespace
} // namespace kiln
