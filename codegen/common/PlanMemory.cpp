// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- PlanMemory.cpp - outputs, one arena, one weights block -------------===//

#include "codegen/common/Passes.h"
#include "codegen/common/SizeBounds.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MathExtras.h"

#include <map>

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

/// `value`, a size computed from @main's arguments by pure operations,
/// computed again at `b` (the top of @main, where every offset is), reusing
/// what `hoisted` already holds; fails on a size computed from anything
/// else (a value loaded from memory).
FailureOr<Value> hoist(Value value, OpBuilder &b, IRMapping &hoisted) {
  if (Value known = hoisted.lookupOrNull(value))
    return known;
  if (isa<BlockArgument>(value))
    return value;
  Operation *definition = value.getDefiningOp();
  if (definition->getNumRegions() != 0 || !isMemoryEffectFree(definition))
    return failure();
  for (Value operand : definition->getOperands())
    if (failed(hoist(operand, b, hoisted)))
      return failure();
  b.clone(*definition, hoisted);
  return hoisted.lookup(value);
}

/// The run sizes computed so far: the bytes of a static part and dynamic
/// sizes (buffers of one shape are one computation).
using RunSizes = std::map<std::pair<int64_t, SmallVector<void *>>, Value>;

/// The bytes a buffer of `type` with `dynamicSizes` takes in this run,
/// rounded up to kAlignment, computed at `b`.
Value runBytes(MemRefType type, ValueRange dynamicSizes, OpBuilder &b, Location loc,
               RunSizes &known) {
  int64_t width = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  for (int64_t size : type.getShape())
    if (!ShapedType::isDynamic(size))
      width *= size;
  Value &result = known[{width, llvm::map_to_vector(dynamicSizes, [](Value size) {
                           return size.getAsOpaquePointer();
                         })}];
  if (result)
    return result;
  Value bytes = arith::ConstantIndexOp::create(b, loc, width);
  for (Value size : dynamicSizes)
    bytes = arith::MulIOp::create(b, loc, bytes, size);
  Value mask = arith::ConstantIndexOp::create(b, loc, kAlignment - 1);
  bytes = arith::AddIOp::create(b, loc, bytes, mask);
  result = arith::AndIOp::create(b, loc, bytes,
                                 arith::ConstantIndexOp::create(b, loc, ~(kAlignment - 1)));
  return result;
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

/// A buffer placed in the arena: its offset and size at the symbols'
/// largest values, its size in this run (null when static), its live range
/// and, once computed, its offset in this run. A kept buffer (or the
/// header that says what the kept ones hold; no alloc) lives across runs.
struct Placed {
  int64_t offset, size;
  Value runSize;
  Operation *alloc, *lastUse;
  OpFoldResult runOffset;
  bool kept = false;

  bool livesAt(Operation *op) const { return lastUse && !lastUse->isBeforeInBlock(op); }
  /// Whether the two are live at once, and so take different bytes.
  bool overlaps(const Placed &other) const {
    if (kept || other.kept)
      return true;
    return alloc->isBeforeInBlock(other.alloc) ? livesAt(other.alloc) : other.livesAt(alloc);
  }
};

/// The terms (symbols and constants) of `value` written out as a tree, up
/// to `limit + 1`, memoized in `terms`.
int64_t termsOf(Value value, int64_t limit, llvm::DenseMap<Value, int64_t> &terms) {
  if (auto it = terms.find(value); it != terms.end())
    return it->second;
  int64_t count = 0;
  Operation *op = value.getDefiningOp();
  if (!op || op->getNumOperands() == 0)
    count = 1;
  for (Value operand : op ? op->getOperands() : ValueRange())
    count = std::min(limit + 1, count + termsOf(operand, limit, terms));
  return terms[value] = count;
}

/// The offset of each buffer in this run. The placement at the largest
/// sizes orders every two buffers that are live at once; in a run each
/// buffer goes just above those placed below it that it overlaps, which
/// keeps that order. A buffer's offset in a run is then at most its
/// offset at the largest sizes, so the arena serves every run, and a run of
/// small sizes uses only its start. With static sizes this is the
/// placement itself; symbolic sizes make offsets arithmetic on the
/// symbols, computed once at the top of @main. An offset of more than
/// `offsetTerms` terms (unless 0) is the one at the largest sizes.
void placeRuns(MutableArrayRef<Placed> placed, OpBuilder &top, Location loc, int64_t offsetTerms) {
  // Static sizes keep the placement (and the pairs need not be compared).
  if (llvm::none_of(placed, [](const Placed &p) { return bool(p.runSize); })) {
    for (Placed &p : placed)
      p.runOffset = top.getIndexAttr(p.offset);
    return;
  }
  llvm::DenseMap<Value, int64_t> terms;
  SmallVector<Placed *> order = llvm::map_to_vector(placed, [](Placed &p) { return &p; });
  llvm::stable_sort(order, [](Placed *l, Placed *r) { return l->offset < r->offset; });
  for (auto [index, current] : llvm::enumerate(order)) {
    int64_t floor = 0;
    SmallVector<Value> tops;
    for (Placed *below : ArrayRef(order).take_front(index)) {
      if (below->offset + below->size > current->offset || !current->overlaps(*below))
        continue;
      std::optional<int64_t> offset = getConstantIntValue(below->runOffset);
      if (offset && !below->runSize) {
        floor = std::max(floor, *offset + below->size);
        continue;
      }
      Value size =
          below->runSize ? below->runSize : arith::ConstantIndexOp::create(top, loc, below->size);
      if (offset == 0) {
        tops.push_back(size);
        continue;
      }
      Value start = getValueOrCreateConstantIndexOp(top, loc, below->runOffset);
      tops.push_back(arith::AddIOp::create(top, loc, start, size));
    }
    if (tops.empty()) {
      current->runOffset = top.getIndexAttr(floor);
      continue;
    }
    Value offset = tops.front();
    for (Value other : ArrayRef(tops).drop_front())
      offset = arith::MaxUIOp::create(top, loc, offset, other);
    if (floor != 0)
      offset =
          arith::MaxUIOp::create(top, loc, offset, arith::ConstantIndexOp::create(top, loc, floor));
    // (The ops of an offset not taken go with the rest of the dead code.)
    current->runOffset = offsetTerms && termsOf(offset, offsetTerms, terms) > offsetTerms
                             ? OpFoldResult(top.getIndexAttr(current->offset))
                             : OpFoldResult(offset);
  }
}

/// Makes @main's symbolic input or output `argument` (of `type`, with
/// `dims` expressions of `symbols`) a byte buffer as large as it can be,
/// viewed at the top of @main as `type` with this run's sizes: functions
/// take buffers of static size. Returns the view.
FailureOr<Value> viewSymbolicArgument(BlockArgument argument, MemRefType type, DimsAttr dims,
                                      ValueRange symbols, OpBuilder &top) {
  Location loc = argument.getLoc();
  SmallVector<Value> sizes;
  for (auto [size, dim] : llvm::zip_equal(type.getShape(), dims.getMap().getResults()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(affine::expandAffineExpr(top, loc, dim, ValueRange{}, symbols));
  std::optional<int64_t> bytes = largestBytes(type, sizes);
  if (!bytes)
    return failure();
  argument.setType(MemRefType::get({*bytes}, top.getI8Type()));
  Value zero = arith::ConstantIndexOp::create(top, loc, 0);
  auto view = memref::ViewOp::create(top, loc, type, argument, zero, sizes);
  argument.replaceAllUsesExcept(view.getResult(), view);
  return view.getResult();
}

struct PlanMemory : impl::PlanMemoryBase<PlanMemory> {
  using PlanMemoryBase::PlanMemoryBase;

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
    llvm::BitVector isSymbol(numInputs);
    SmallVector<Value> symbols;
    for (BlockArgument argument : body.getArguments())
      if (func.getArgAttr(argument.getArgNumber(), kSymbolArgAttr)) {
        isSymbol.set(argument.getArgNumber());
        symbols.push_back(argument);
      }
    // What every run computes first from the symbols (the views of
    // symbolic inputs and outputs, buffer sizes and offsets), gathered here
    // and moved to the top of @main at the end.
    Block prologue;
    // A plan that fails part way leaves @main whole: what the prologue
    // holds still has uses there.
    auto keepPrologue = llvm::make_scope_exit(
        [&] { body.getOperations().splice(body.begin(), prologue.getOperations()); });
    OpBuilder top(context);
    top.setInsertionPointToEnd(&prologue);
    IRMapping hoisted;
    RunSizes runSizes;

    // Sizes that bufferization reads off buffers (memref.dim of an alloc or
    // a view) become the values they were made with: every size is then
    // computed from the symbols.
    SmallVector<Operation *> dims;
    if (!symbols.empty())
      func.walk([&](memref::DimOp dim) { dims.push_back(dim); });
    if (!dims.empty()) {
      RewritePatternSet patterns(context);
      memref::DimOp::getCanonicalizationPatterns(patterns, context);
      (void)applyOpPatternsGreedily(dims, std::move(patterns));
    }

    // Symbolic inputs are byte buffers viewed with the run's sizes.
    for (unsigned i = 0; i < numInputs; ++i) {
      auto dims = func.getArgAttrOfType<DimsAttr>(i, kDimsArgAttr);
      BlockArgument input = body.getArgument(i);
      if (!dims)
        continue;
      if (failed(
              viewSymbolicArgument(input, cast<MemRefType>(input.getType()), dims, symbols, top))) {
        func.emitError("cannot bound the size of input ") << i << " from the symbols' ranges";
        return signalPassFailure();
      }
    }

    // Outputs: returned buffers become arguments written in place.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Value> returned(ret.getOperands());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < returned.size(); ++i)
      resultAttrs.push_back(func.getResultAttrDict(i));
    for (auto [index, value] : llvm::enumerate(returned)) {
      auto type = cast<MemRefType>(value.getType());
      type = MemRefType::get(type.getShape(), type.getElementType());
      BlockArgument argument = body.addArgument(type, loc);
      Value output = argument;
      if (auto dims = func.getResultAttrOfType<DimsAttr>(index, kDimsArgAttr)) {
        FailureOr<Value> view = viewSymbolicArgument(argument, type, dims, symbols, top);
        if (failed(view)) {
          func.emitError("cannot bound the size of output ")
              << index << " from the symbols' ranges";
          return signalPassFailure();
        }
        output = *view;
      }
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

    // Activations: first fit in one arena at the largest sizes, reusing
    // memory whose last use is behind the new buffer's definition. Kept
    // buffers go first, at the bottom of the arena and at their largest
    // sizes in every run, above a header of an i64 flag and each symbol's
    // value (kiln-skip-kept-kernels writes it: the sizes they hold values
    // for).
    SmallVector<memref::AllocOp> allocs;
    for (Operation &op : body)
      if (auto alloc = dyn_cast<memref::AllocOp>(op); alloc && alloc->hasAttr(kKeptAttr))
        allocs.push_back(alloc);
    size_t numKept = allocs.size();
    for (Operation &op : body)
      if (auto alloc = dyn_cast<memref::AllocOp>(op); alloc && !alloc->hasAttr(kKeptAttr))
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
    Operation *forever = body.getTerminator();
    if (numKept) {
      arenaBytes = llvm::alignTo(8 * int64_t(1 + symbols.size()), kAlignment);
      placed.push_back({0, arenaBytes, {}, nullptr, forever, {}, /*kept=*/true});
    }
    for (auto [index, alloc] : llvm::enumerate(allocs)) {
      bool kept = index < numKept;
      MemRefType type = alloc.getType();
      if (!type.getLayout().isIdentity()) {
        alloc.emitError("only identity-layout buffers can be planned");
        return signalPassFailure();
      }
      std::optional<int64_t> bytes = largestBytes(type, alloc.getDynamicSizes());
      if (!bytes) {
        alloc.emitError("cannot bound this buffer's size from the symbols' ranges");
        return signalPassFailure();
      }
      int64_t size = llvm::alignTo(std::max<int64_t>(*bytes, 1), kAlignment);
      FailureOr<Operation *> end = lastUse(alloc.getResult(), body);
      if (failed(end))
        return signalPassFailure();
      Value runSize;
      if (!kept && !alloc.getDynamicSizes().empty()) {
        SmallVector<Value> sizes;
        for (Value dynamic : alloc.getDynamicSizes()) {
          FailureOr<Value> size = hoist(dynamic, top, hoisted);
          if (failed(size)) {
            alloc.emitError("this buffer's size is not computed from the symbols alone");
            return signalPassFailure();
          }
          sizes.push_back(*size);
        }
        runSize = runBytes(type, sizes, top, alloc.getLoc(), runSizes);
      }
      // Buffers still live at this point, by offset.
      SmallVector<Placed *> live;
      for (Placed &p : placed)
        if (p.livesAt(alloc))
          live.push_back(&p);
      llvm::sort(live, [](Placed *l, Placed *r) { return l->offset < r->offset; });
      int64_t offset = 0;
      for (Placed *p : live) {
        if (offset + size <= p->offset)
          break;
        offset = std::max(offset, p->offset + p->size);
      }
      placed.push_back({offset, size, runSize, alloc, kept ? forever : *end, {}, kept});
      arenaBytes = std::max(arenaBytes, offset + size);
    }
    placeRuns(placed, top, loc, offsetTerms);
    for (Placed &p : placed) {
      if (!p.alloc)
        continue;
      auto alloc = cast<memref::AllocOp>(p.alloc);
      b.setInsertionPoint(alloc);
      Value at = getValueOrCreateConstantIndexOp(b, alloc.getLoc(), p.runOffset);
      alloc.replaceAllUsesWith(memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(), arena, at,
                                                      alloc.getDynamicSizes())
                                   .getResult());
      alloc.erase();
    }
    for (Operation &op : llvm::make_early_inc_range(body))
      if (isa<memref::DeallocOp>(op))
        op.erase();
    keepPrologue.release();
    body.getOperations().splice(body.begin(), prologue.getOperations());

    // The symbols' values come last.
    for (Value symbol : symbols)
      symbol.replaceAllUsesWith(body.addArgument(symbol.getType(), symbol.getLoc()));
    weights.setType(MemRefType::get({weightBytes}, b.getI8Type()));
    arena.setType(MemRefType::get({arenaBytes}, b.getI8Type()));
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i < numInputs; ++i)
      if (!isSymbol.test(i))
        argAttrs.push_back(func.getArgAttrDict(i));
    // Outputs keep their names and say which output they are.
    for (auto [index, attrs] : llvm::enumerate(resultAttrs)) {
      NamedAttrList list(attrs);
      list.set("kiln.output", b.getI64IntegerAttr(int64_t(index)));
      argAttrs.push_back(list.getDictionary(context));
    }
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("kiln.arena", b.getUnitAttr())));
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("kiln.weights", b.getUnitAttr())));
    for (unsigned i = 0; i < numInputs; ++i)
      if (isSymbol.test(i))
        argAttrs.push_back(func.getArgAttrDict(i));
    isSymbol.resize(body.getNumArguments());
    body.eraseArguments(isSymbol);
    func.setType(FunctionType::get(context, body.getArgumentTypes(), {}));
    func.setAllArgAttrs(argAttrs);
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    module->setAttr("kiln.arena_bytes", b.getI64IntegerAttr(arenaBytes));
    module->setAttr("kiln.weights_bytes", b.getI64IntegerAttr(weightBytes));
    module->setAttr("kiln.weights", b.getArrayAttr(weightEntries));
  }
};

} // namespace
} // namespace kiln
