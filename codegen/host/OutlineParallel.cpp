// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- OutlineParallel.cpp - scf.forall bodies become runtime tasks -------===//
//
// The host runtime runs parallel work on its own threads, through the
// context it passes @main as a last argument (which the runtime hooks @main
// calls are given too). Each top-level scf.forall in @main becomes
//
//   - a task function `@main_tasks_<i>(captured buffers..., index)`: the
//     loop body for one task (task i runs the loop's index lower + i * step);
//   - a call to the declaration `@main_tasks_<i>.dispatch(context, captured
//     buffers...)`, marked with the task function and the task count (or,
//     for a loop whose bound a run gives, taking the count as a last
//     argument), which the host code generator defines after lowering to
//     LLVM (it hands the tasks to the runtime's parallel_for).
//
// Constants and views the body uses are cloned into it. A loop whose body
// still captures anything but identity-layout buffers and integers (the
// sizes and offsets of a run) stays a loop (scf-forall-to-for lowers it).
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Outlining.h"
#include "codegen/host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln {

#define GEN_PASS_DEF_OUTLINEPARALLEL
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// A one-dimensional loop with a constant start and step and nothing
/// shared: its tasks' count is a constant, or (`upper` set) computed from
/// an upper bound a run gives.
struct TaskLoop {
  int64_t lower, step, count;
  Value upper;
};

std::optional<TaskLoop> taskLoop(scf::ForallOp forall) {
  if (forall.getRank() != 1 || !forall.getOutputs().empty())
    return std::nullopt;
  std::optional<int64_t> lower = getConstantIntValue(forall.getMixedLowerBound()[0]);
  OpFoldResult upperBound = forall.getMixedUpperBound()[0];
  std::optional<int64_t> upper = getConstantIntValue(upperBound);
  std::optional<int64_t> step = getConstantIntValue(forall.getMixedStep()[0]);
  if (!lower || !step || *step <= 0)
    return std::nullopt;
  if (!upper)
    return TaskLoop{*lower, *step, 0, cast<Value>(upperBound)};
  if (*upper <= *lower)
    return std::nullopt;
  return TaskLoop{*lower, *step, (*upper - *lower + *step - 1) / *step, Value()};
}

/// Gives each runtime hook the context as a first argument, at its
/// declaration and at @main's calls of it.
void passContextToHooks(ModuleOp module, func::FuncOp main, Value runtime) {
  for (auto hook : module.getOps<func::FuncOp>()) {
    if (!hook->hasAttr(kRuntimeHookAttr))
      continue;
    SmallVector<Type> inputs = {runtime.getType()};
    llvm::append_range(inputs, hook.getArgumentTypes());
    hook.setType(FunctionType::get(module.getContext(), inputs, hook.getResultTypes()));
  }
  main.walk([&](func::CallOp call) {
    auto hook = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!hook || !hook->hasAttr(kRuntimeHookAttr))
      return;
    call->insertOperands(0, runtime);
  });
}

struct OutlineParallel : impl::OutlineParallelBase<OutlineParallel> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    MLIRContext *context = &getContext();
    auto pointer = LLVM::LLVMPointerType::get(context);
    if (failed(
            main.insertArgument(main.getNumArguments(), pointer, DictionaryAttr(), main.getLoc())))
      return signalPassFailure();
    Value runtime = main.getArguments().back();
    passContextToHooks(module, main, runtime);

    SmallVector<scf::ForallOp> loops;
    main.walk([&](scf::ForallOp forall) {
      if (!forall->getParentOfType<scf::ForallOp>())
        loops.push_back(forall);
    });
    OpBuilder b(context);
    SymbolTable symbols(module);
    for (scf::ForallOp forall : loops) {
      std::optional<TaskLoop> loop = taskLoop(forall);
      if (!loop)
        continue;
      host::sinkConstantsAndViews(forall.getRegion());
      SetVector<Value> captured = host::valuesFromOutside(forall.getRegion());
      if (!llvm::all_of(captured, host::isPassable))
        continue;
      Location loc = forall.getLoc();

      // The task: the body for one index.
      SmallVector<Type> types = llvm::to_vector(ValueRange(captured.getArrayRef()).getTypes());
      types.push_back(b.getIndexType());
      b.setInsertionPointToEnd(module.getBody());
      auto task = func::FuncOp::create(b, loc, (main.getName() + "_tasks").str(),
                                       b.getFunctionType(types, {}));
      task.setPrivate();
      symbols.insert(task);
      Block *entry = task.addEntryBlock();
      Block *body = forall.getBody();
      // The loop's index for task i: lower + i * step.
      b.setInsertionPointToStart(entry);
      Value index = entry->getArguments().back();
      if (loop->step != 1)
        index = arith::MulIOp::create(b, loc, index,
                                      arith::ConstantIndexOp::create(b, loc, loop->step));
      if (loop->lower != 0)
        index = arith::AddIOp::create(b, loc, index,
                                      arith::ConstantIndexOp::create(b, loc, loop->lower));
      forall.getInductionVar(0).replaceAllUsesWith(index);
      entry->getOperations().splice(entry->end(), body->getOperations(), body->begin(),
                                    std::prev(body->end()));
      for (auto [value, argument] : llvm::zip(captured, entry->getArguments()))
        replaceAllUsesInRegionWith(value, argument, task.getBody());
      b.setInsertionPointToEnd(entry);
      func::ReturnOp::create(b, loc);

      // Its dispatch, defined after lowering to LLVM; a count a run gives
      // is its last argument.
      b.setInsertionPointToEnd(module.getBody());
      SmallVector<Type> dispatchTypes = {pointer};
      llvm::append_range(dispatchTypes, ValueRange(captured.getArrayRef()).getTypes());
      if (loop->upper)
        dispatchTypes.push_back(b.getIndexType());
      auto dispatch = func::FuncOp::create(b, loc, (task.getName() + ".dispatch").str(),
                                           b.getFunctionType(dispatchTypes, {}));
      dispatch.setPrivate();
      dispatch->setAttr(kTaskAttr, FlatSymbolRefAttr::get(task));
      if (!loop->upper)
        dispatch->setAttr(kTaskCountAttr, b.getI64IntegerAttr(loop->count));
      symbols.insert(dispatch);

      b.setInsertionPoint(forall);
      SmallVector<Value> operands = {runtime};
      llvm::append_range(operands, captured);
      if (loop->upper) {
        // ceil((upper - lower) / step), none when upper <= lower.
        Value span = arith::SubIOp::create(b, loc, loop->upper,
                                           arith::ConstantIndexOp::create(b, loc, loop->lower));
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        span = arith::MaxSIOp::create(b, loc, span, zero);
        Value step = arith::ConstantIndexOp::create(b, loc, loop->step);
        operands.push_back(arith::CeilDivUIOp::create(b, loc, span, step));
      }
      func::CallOp::create(b, loc, dispatch, operands);
      forall.erase();
    }
  }
};

} // namespace
} // namespace kiln
