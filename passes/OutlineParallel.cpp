//===- OutlineParallel.cpp - scf.forall bodies become runtime tasks -------===//
//
// The host runtime runs parallel work on its own threads, through the
// context it passes @main as a last argument. Each top-level scf.forall in
// @main becomes
//
//   - a task function `@main_tasks_<i>(captured buffers..., index)`: the
//     loop body for one index;
//   - a call to the declaration `@main_tasks_<i>.dispatch(context, captured
//     buffers...)`, marked with the task function and the task count, which
//     the host code generator defines after lowering to LLVM (it hands the
//     tasks to the runtime's parallel_for).
//
// A loop whose body captures anything but constants and identity-layout
// buffers stays a loop (scf-forall-to-for lowers it).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln {

#define GEN_PASS_DEF_OUTLINEPARALLEL
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// The number of tasks of a normalized one-dimensional loop (0 to n by 1)
/// with nothing shared, or nothing.
std::optional<int64_t> taskCount(scf::ForallOp forall) {
  if (forall.getRank() != 1 || !forall.getOutputs().empty())
    return std::nullopt;
  std::optional<int64_t> lower = getConstantIntValue(forall.getMixedLowerBound()[0]);
  std::optional<int64_t> upper = getConstantIntValue(forall.getMixedUpperBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(forall.getMixedStep()[0]);
  if (lower != 0 || step != 1 || !upper)
    return std::nullopt;
  return upper;
}

/// Clones the constants the loop body uses into it, so that the task
/// function sees them as constants rather than arguments.
void sinkConstants(scf::ForallOp forall) {
  Region &body = forall.getRegion();
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(body, captured);
  OpBuilder b = OpBuilder::atBlockBegin(forall.getBody());
  for (Value value : captured) {
    Operation *definition = value.getDefiningOp();
    if (!definition || !definition->hasTrait<OpTrait::ConstantLike>())
      continue;
    Operation *copy = b.clone(*definition);
    replaceAllUsesInRegionWith(value, copy->getResult(0), body);
  }
}

bool isPassableBuffer(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

struct OutlineParallel : impl::OutlineParallelBase<OutlineParallel> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    MLIRContext *context = &getContext();
    auto pointer = LLVM::LLVMPointerType::get(context);
    if (failed(main.insertArgument(main.getNumArguments(), pointer, DictionaryAttr(),
                                   main.getLoc())))
      return signalPassFailure();
    Value runtime = main.getArguments().back();

    SmallVector<scf::ForallOp> loops;
    main.walk([&](scf::ForallOp forall) {
      if (!forall->getParentOfType<scf::ForallOp>())
        loops.push_back(forall);
    });
    OpBuilder b(context);
    SymbolTable symbols(module);
    for (scf::ForallOp forall : loops) {
      std::optional<int64_t> tasks = taskCount(forall);
      if (!tasks)
        continue;
      sinkConstants(forall);
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(forall.getRegion(), captured);
      if (!llvm::all_of(captured, isPassableBuffer))
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
      forall.getInductionVar(0).replaceAllUsesWith(entry->getArguments().back());
      entry->getOperations().splice(entry->end(), body->getOperations(), body->begin(),
                                    std::prev(body->end()));
      for (auto [value, argument] : llvm::zip(captured, entry->getArguments()))
        replaceAllUsesInRegionWith(value, argument, task.getBody());
      b.setInsertionPointToEnd(entry);
      func::ReturnOp::create(b, loc);

      // Its dispatch, defined after lowering to LLVM.
      b.setInsertionPointToEnd(module.getBody());
      SmallVector<Type> dispatchTypes = {pointer};
      llvm::append_range(dispatchTypes, ValueRange(captured.getArrayRef()).getTypes());
      auto dispatch = func::FuncOp::create(b, loc, (task.getName() + ".dispatch").str(),
                                           b.getFunctionType(dispatchTypes, {}));
      dispatch.setPrivate();
      dispatch->setAttr(kTaskAttr, FlatSymbolRefAttr::get(task));
      dispatch->setAttr(kTaskCountAttr, b.getI64IntegerAttr(*tasks));
      symbols.insert(dispatch);

      b.setInsertionPoint(forall);
      SmallVector<Value> operands = {runtime};
      llvm::append_range(operands, captured);
      func::CallOp::create(b, loc, dispatch, operands);
      forall.erase();
    }
  }
};

} // namespace
} // namespace kiln
