// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KeepSizeValues.cpp - values of the sizes alone, kept across runs ---===//
//
// A model computes some values from its sizes alone: a T5 encoder's
// relative-position buckets and their biases, a causal mask, position ids
// and their embeddings. A static compile folds them into weights; a plan
// whose sizes a run gives would compute them in every run (the T5 test
// encoder's buckets were 60% of its run at 1x128). Here the kernels that
// read only weights and what such kernels wrote are marked
// kiln.sizes_only, and the buffers they write that other kernels read are
// marked kiln.kept. kiln-plan-memory gives kept buffers bytes no other
// buffer shares, and kiln-skip-kept-kernels runs the marked kernels only
// in a run whose sizes differ from the last one's.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/common/SizeBounds.h"
#include "codegen/host/Passes.h"
#include "dialects/kiln/Dims.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {

#define GEN_PASS_DEF_KEEPSIZEVALUES
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// The buffers from outside `kernel` that it reads or writes, and those it
/// writes: a linalg op's outputs, what an op's effects say it writes, and
/// every buffer of an op that says nothing of its effects.
struct KernelBuffers {
  llvm::SetVector<Value> touched, written;
};

KernelBuffers buffersOf(Operation *kernel) {
  KernelBuffers result;
  kernel->walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    bool unknown = !effects && !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
                   !isa<ViewLikeOpInterface>(op);
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      Value root = rootOf(operand.get());
      if (kernel->isAncestor(root.getParentBlock()->getParentOp()))
        continue;
      result.touched.insert(root);
      bool writes = unknown;
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        writes |= linalgOp.isDpsInit(&operand);
      if (effects) {
        SmallVector<SideEffects::EffectInstance<MemoryEffects::Effect>> list;
        effects.getEffectsOnValue(operand.get(), list);
        writes |= llvm::any_of(
            list, [](auto &effect) { return isa<MemoryEffects::Write>(effect.getEffect()); });
      }
      if (writes)
        result.written.insert(root);
    }
  });
  return result;
}

/// Whether `root` is a constant global: a weight.
bool isWeight(Value root, SymbolTable &symbols) {
  auto read = root.getDefiningOp<memref::GetGlobalOp>();
  auto global = read ? symbols.lookup<memref::GlobalOp>(read.getName()) : nullptr;
  return global && global.getConstant();
}

/// Whether `alloc`, or a view of it, is returned (an output of the model,
/// which a run writes to the caller's buffer).
bool isReturned(memref::AllocOp alloc) {
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      if (isa<func::ReturnOp>(user))
        return true;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user); view && view.getViewSource() == current)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

struct KeepSizeValues : impl::KeepSizeValuesBase<KeepSizeValues> {
  using KeepSizeValuesBase::KeepSizeValuesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal() || !main.getBody().hasOneBlock())
      return;
    SymbolTable symbols(module);
    Block &body = main.front();

    // The ops of @main that touch memory: the kernels kiln-list-kernels
    // lists, and ops it does not (a size stored into a buffer), which are
    // never marked, so that kiln-skip-kept-kernels finds each marked kernel
    // between two hooks.
    SmallVector<Operation *> kernels;
    llvm::SetVector<Operation *> listed;
    llvm::DenseMap<Operation *, KernelBuffers> accesses;
    llvm::SetVector<Operation *> allocs;
    for (Operation &op : body) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (!isReturned(alloc))
          allocs.insert(alloc);
        continue;
      }
      if (isMemoryEffectFree(&op) || isa<memref::DeallocOp, func::ReturnOp>(op))
        continue;
      kernels.push_back(&op);
      if (kernelResult(op))
        listed.insert(&op);
      accesses[&op] = buffersOf(&op);
    }
    llvm::DenseMap<Operation *, SmallVector<Operation *>> writers;
    for (Operation *kernel : kernels)
      for (Value root : accesses[kernel].written)
        if (Operation *alloc = root.getDefiningOp(); alloc && allocs.contains(alloc))
          writers[alloc].push_back(kernel);

    // The largest set where each kernel touches only weights and buffers
    // of the set, and each buffer of the set is written only by its
    // kernels; the buffers other kernels read are kept, at most maxBytes
    // of them (past that, the largest leaves the set).
    llvm::SetVector<Operation *> sizesOnly = listed;
    llvm::SetVector<Operation *> computed = allocs;
    llvm::SetVector<Operation *> kept;
    while (true) {
      for (bool changed = true; changed;) {
        changed = false;
        for (Operation *kernel : llvm::to_vector(sizesOnly)) {
          bool reads = llvm::all_of(accesses[kernel].touched, [&](Value root) {
            Operation *definition = root.getDefiningOp();
            return isWeight(root, symbols) || (definition && computed.contains(definition));
          });
          if (!reads) {
            sizesOnly.remove(kernel);
            changed = true;
          }
        }
        for (Operation *alloc : llvm::to_vector(computed)) {
          const SmallVector<Operation *> &written = writers.lookup(alloc);
          if (written.empty() ||
              !llvm::all_of(written, [&](Operation *k) { return sizesOnly.contains(k); })) {
            computed.remove(alloc);
            changed = true;
          }
        }
      }
      kept.clear();
      int64_t bytes = 0;
      Operation *largest = nullptr;
      int64_t largestBytes = 0;
      for (Operation *kernel : kernels) {
        if (sizesOnly.contains(kernel))
          continue;
        for (Value root : accesses[kernel].touched) {
          Operation *alloc = root.getDefiningOp();
          if (!alloc || !computed.contains(alloc) || !kept.insert(alloc))
            continue;
          auto typed = cast<memref::AllocOp>(alloc);
          // (Past maxBytes a size counts as maxBytes + 1: the sum stays small.)
          int64_t size = std::min(
              kiln::largestBytes(typed.getType(), typed.getDynamicSizes()).value_or(INT64_MAX),
              maxBytes + 1);
          bytes += size;
          if (size >= largestBytes) {
            largest = alloc;
            largestBytes = size;
          }
        }
      }
      if (bytes <= maxBytes)
        break;
      computed.remove(largest);
    }
    if (kept.empty())
      return;
    UnitAttr unit = UnitAttr::get(&getContext());
    for (Operation *kernel : sizesOnly)
      kernel->setAttr(kSizesOnlyAttr, unit);
    for (Operation *alloc : kept)
      alloc->setAttr(kKeptAttr, unit);

    // The symbols the kept values are computed from: those the marked
    // kernels' sizes and their buffers' sizes are computed from (a bias of
    // the sequence alone stays when only the batch changes).
    SmallVector<Value> worklist;
    for (Operation *kernel : sizesOnly) {
      kernel->walk([&](Operation *op) {
        for (Value operand : op->getOperands())
          if (!kernel->isAncestor(operand.getParentBlock()->getParentOp()))
            worklist.push_back(operand);
      });
      for (Value root : accesses[kernel].touched)
        worklist.push_back(root);
    }
    llvm::DenseSet<Value> seen;
    bool all = false;
    while (!worklist.empty() && !all) {
      Value value = worklist.pop_back_val();
      if (!seen.insert(value).second)
        continue;
      if (auto argument = dyn_cast<BlockArgument>(value)) {
        if (argument.getOwner() == &body &&
            main.getArgAttr(argument.getArgNumber(), kSymbolArgAttr))
          main.setArgAttr(argument.getArgNumber(), kKeptSizesAttr, unit);
        continue;
      }
      Operation *definition = value.getDefiningOp();
      // A size read from memory could come from anything.
      all = !isMemoryEffectFree(definition) && !isa<memref::AllocOp>(definition);
      llvm::append_range(worklist, definition->getOperands());
    }
    if (all)
      for (BlockArgument argument : body.getArguments())
        if (main.getArgAttr(argument.getArgNumber(), kSymbolArgAttr))
          main.setArgAttr(argument.getArgNumber(), kKeptSizesAttr, unit);
  }
};

} // namespace
} // namespace kiln
