// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- PlanMemory.cpp - outputs, one arena, one weights block -------------===//

#include "codegen/common/Passes.h"
#include "codegen/common/SizeBounds.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {

#define GEN_PASS_DEF_PLANMEMORY
#include "codegen/common/Passes.h.inc"

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

int64_t byteSize(MemRefType type) {
  // Booleans take a byte each, as LLVM stores i1.
  int64_t width = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  return type.getNumElements() * width;
}

/// The most bytes `alloc` takes in any run: its size, or for a symbolic
/// one its size at the largest values its dynamic sizes take (SizeBounds.h).
std::optional<int64_t> largestBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  int64_t count = 1;
  auto dynamic = alloc.getDynamicSizes().begin();
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size)) {
      std::optional<std::pair<int64_t, int64_t>> bounds = sizeBounds(*dynamic++);
      if (!bounds || bounds->first < 0)
        return std::nullopt;
      size = bounds->second;
    }
    if (llvm::MulOverflow(count, size, count))
      return std::nullopt;
  }
  int64_t bytes;
  if (llvm::MulOverflow(count, int64_t(llvm::divideCeil(type.getElementTypeBitWidth(), 8)), bytes))
    return std::nullopt;
  return bytes;
}

/// The last top-level op of `body` that uses `value`, a view of it or a
/// tensor map of it; fails
/// on a use that could alias the buffer without being a view (a select or
/// loop result of memref type), which the planning cannot follow.
FailureOr<Operation *> lastUse(Value value, Block &body) {
  Operation *last = nullptr;
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && (!last || last->isBeforeInBlock(top)))
        last = top;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == current) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      // The kernels that take a tensor map of the buffer read it.
      if (auto map = dyn_cast<TensorMapOp>(user)) {
        worklist.push_back(map.getMap());
        continue;
      }
      if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<MemRefType>))
        return user->emitError("cannot plan memory through this op, which may alias a buffer");
    }
  }
  return last;
}

struct Placed {
  int64_t offset, size;
  Operation *lastUse;
};

struct PlanMemory : impl::PlanMemoryBase<PlanMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>("main");
    if (!func || !func.getBody().hasOneBlock()) {
      module.emitError("expected a function @main with one block");
      return signalPassFailure();
    }
    Block &body = func.front();
    MLIRContext *context = &getContext();
    OpBuilder b(context);
    Location loc = func.getLoc();
    unsigned numInputs = func.getNumArguments();

    // Outputs: returned buffers become arguments written in place.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Value> returned(ret.getOperands());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < returned.size(); ++i)
      resultAttrs.push_back(func.getResultAttrDict(i));
    for (Value value : returned) {
      auto type = cast<MemRefType>(value.getType());
      BlockArgument output =
          body.addArgument(MemRefType::get(type.getShape(), type.getElementType()), loc);
      auto alloc = value.getDefiningOp<memref::AllocOp>();
      if (alloc && llvm::count(returned, value) == 1 && alloc->getBlock() == &body) {
        alloc.replaceAllUsesWith(output);
        alloc.erase();
      } else {
        b.setInsertionPoint(ret);
        linalg::CopyOp::create(b, loc, value, output);
      }
    }
    ret.getOperandsMutable().clear();

    // The arena and the weights follow; their sizes are set at the end.
    Value arena = body.addArgument(MemRefType::get({0}, b.getI8Type()), loc);
    Value weights = body.addArgument(MemRefType::get({0}, b.getI8Type()), loc);

    // Weights: every constant global becomes a view into one block.
    llvm::MapVector<StringAttr, int64_t> weightOffsets;
    SmallVector<Attribute> weightEntries;
    int64_t weightBytes = 0;
    SmallVector<memref::GetGlobalOp> reads;
    func.walk([&](memref::GetGlobalOp op) { reads.push_back(op); });
    for (memref::GetGlobalOp read : reads) {
      auto global = module.lookupSymbol<memref::GlobalOp>(read.getNameAttr());
      if (!global || !global.getConstant() || !global.getInitialValue()) {
        read.emitError("only constant globals can be weights");
        return signalPassFailure();
      }
      auto [it, inserted] = weightOffsets.try_emplace(global.getSymNameAttr(), weightBytes);
      if (inserted) {
        weightEntries.push_back(
            b.getDictionaryAttr({b.getNamedAttr("offset", b.getI64IntegerAttr(weightBytes)),
                                 b.getNamedAttr("value", *global.getInitialValue())}));
        weightBytes = llvm::alignTo(weightBytes + byteSize(global.getType()), kAlignment);
      }
      b.setInsertionPoint(read);
      Value offset = arith::ConstantIndexOp::create(b, read.getLoc(), it->second);
      read.replaceAllUsesWith(
          memref::ViewOp::create(b, read.getLoc(), read.getType(), weights, offset, ValueRange{})
              .getResult());
      read.erase();
    }
    for (auto global : llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
      if (weightOffsets.count(global.getSymNameAttr()))
        global.erase();

    // Activations: first fit in one arena, reusing memory whose last use is
    // behind the new buffer's definition.
    SmallVector<memref::AllocOp> allocs;
    for (Operation &op : body)
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
    if (func.walk([&](memref::AllocOp alloc) {
              return alloc->getBlock() == &body ? WalkResult::advance() : WalkResult::interrupt();
            })
            .wasInterrupted()) {
      func.emitError("buffers allocated inside loops or regions cannot be planned");
      return signalPassFailure();
    }
    SmallVector<Placed> placed;
    int64_t arenaBytes = 0;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      if (!type.getLayout().isIdentity()) {
        alloc.emitError("only identity-layout buffers can be planned");
        return signalPassFailure();
      }
      // A buffer of symbolic size takes its largest in every run.
      std::optional<int64_t> bytes = largestBytes(alloc);
      if (!bytes) {
        alloc.emitError("cannot bound this buffer's size from the symbols' ranges");
        return signalPassFailure();
      }
      int64_t size = llvm::alignTo(std::max<int64_t>(*bytes, 1), kAlignment);
      FailureOr<Operation *> end = lastUse(alloc.getResult(), body);
      if (failed(end))
        return signalPassFailure();
      // Buffers still live at this point, by offset.
      SmallVector<Placed *> live;
      for (Placed &p : placed)
        if (p.lastUse && !p.lastUse->isBeforeInBlock(alloc))
          live.push_back(&p);
      llvm::sort(live, [](Placed *l, Placed *r) { return l->offset < r->offset; });
      int64_t offset = 0;
      for (Placed *p : live) {
        if (offset + size <= p->offset)
          break;
        offset = std::max(offset, p->offset + p->size);
      }
      placed.push_back({offset, size, *end});
      arenaBytes = std::max(arenaBytes, offset + size);
      b.setInsertionPoint(alloc);
      Value at = arith::ConstantIndexOp::create(b, alloc.getLoc(), offset);
      alloc.replaceAllUsesWith(
          memref::ViewOp::create(b, alloc.getLoc(), type, arena, at, alloc.getDynamicSizes())
              .getResult());
      alloc.erase();
    }
    for (Operation &op : llvm::make_early_inc_range(body))
      if (isa<memref::DeallocOp>(op))
        op.erase();

    weights.setType(MemRefType::get({weightBytes}, b.getI8Type()));
    arena.setType(MemRefType::get({arenaBytes}, b.getI8Type()));
    func.setType(FunctionType::get(context, body.getArgumentTypes(), {}));
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i < numInputs; ++i)
      argAttrs.push_back(func.getArgAttrDict(i));
    // Outputs keep their names and say which output they are.
    for (auto [index, attrs] : llvm::enumerate(resultAttrs)) {
      NamedAttrList list(attrs);
      list.set("kiln.output", b.getI64IntegerAttr(int64_t(index)));
      argAttrs.push_back(list.getDictionary(context));
    }
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("kiln.arena", b.getUnitAttr())));
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("kiln.weights", b.getUnitAttr())));
    func.setAllArgAttrs(argAttrs);
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    module->setAttr("kiln.arena_bytes", b.getI64IntegerAttr(arenaBytes));
    module->setAttr("kiln.weights_bytes", b.getI64IntegerAttr(weightBytes));
    module->setAttr("kiln.weights", b.getArrayAttr(weightEntries));
  }
};

} // namespace
} // namespace kiln
