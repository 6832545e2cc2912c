// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- FuseRows.cpp - kernels over rows, a block of rows at a time --------===//
//
// Attention is a chain of kernels over the same rows (one per query):
//
//   S = Q . K^T        scores, [batch, heads, queries, keys]
//   S' = S * scale (+ mask), the row statistics of S' (maximum, sum of
//   exponentials), P = exp(S' - max) / sum
//   O = P . V          [batch, heads, queries, depth]
//
// Run kernel by kernel, the scores make several trips through memory: a
// Whisper encoder's are 1500 x 1500 a head, 54 MB a layer, written by the
// first product, read and written by Softmax, read by the second. Each row
// of O, though, needs only its own rows of the intermediates. Here such a
// chain becomes one kernel: a loop of tasks, each over a block of R query
// rows of one batch and head, that runs every kernel of the chain on that
// block, the intermediates in buffers of R rows on the task's stack, where
// they stay in cache. The kernels inside are the same linalg ops on
// smaller buffers, so the passes after vectorize them as they would the
// whole ones (the products as register tiles, on the calling thread).
//
// The same holds for other chains over rows: an MLP's two products and
// its activation (its hidden rows in cache), and a normalization (Softmax,
// LayerNorm) whose statistics and normalizing kernels then read a block's
// rows while they are in L1: one kernel, one pass over its rows.
//
// A chain is found from its last kernel backwards: an intermediate is a
// buffer of @main that only the chain's kernels touch, before its end,
// each reading and writing it along the same leading dimensions (batch,
// heads, rows) as the chain's output. The chain's kernels must be
// consecutive in @main, and their bodies may index with their loop indices
// only intermediates, or outside buffers at their own row (each becomes
// the block's buffer or slice, where a loop index counts from the block's
// start). Chains of products whose largest intermediate fits in the caches
// anyway (at the smallest run, where sizes are a run's) are left as they
// are.
//
// The leading dimensions but the rows may be a run's (a symbolic batch):
// the tasks are then counted at run time, and every buffer of the chain
// must have been allocated with the same run-time sizes. Rows, and the
// dimensions after the leading ones, of run-time size are not fused yet.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/ContractionFusion.h"
#include "codegen/host/Passes.h"

#include "codegen/common/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {

#define GEN_PASS_DEF_FUSEROWS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;
using namespace host;

/// Below this many bytes the largest intermediate stays in the caches
/// unfused (BERT-base's scores, 768 KiB a layer).
constexpr int64_t kFuseBytes = int64_t(1) << 20;
/// The most the intermediates of a block may take on a task's stack
/// (threads have 8 MiB of it by default; an embedding program's may have
/// less).
constexpr int64_t kStackBytes = int64_t(256) << 10;
/// The most a block may read of an operand from outside the chain.
constexpr int64_t kReadBytes = int64_t(1) << 20;
/// The alignment of the intermediates: each vector in one cache line.
constexpr int64_t kCacheLine = 64;

/// The bytes of `buffer` in the smallest run: a size given at run time
/// counts as 1.
int64_t leastBytesOf(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  for (int64_t size : type.getShape())
    bytes *= ShapedType::isDynamic(size) ? 1 : size;
  return bytes;
}

/// The size of dimension `dim` of `buffer` as it is known without building
/// anything: static, or the run-time size it was allocated with.
std::optional<OpFoldResult> knownSize(Value buffer, int64_t dim) {
  auto type = cast<MemRefType>(buffer.getType());
  if (!type.isDynamicDim(dim))
    return OpFoldResult(IntegerAttr::get(IndexType::get(type.getContext()), type.getDimSize(dim)));
  if (auto alloc = buffer.getDefiningOp<memref::AllocOp>())
    return OpFoldResult(alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)]);
  return std::nullopt;
}

/// A chain of kernels over the same leading dimensions: ending in a product
/// and holding another, or row statistics and the kernels that use them.
class Chain {
public:
  explicit Chain(linalg::GenericOp last) : last(last) {
    // The leading dimensions may be a run's (a symbolic batch), but for
    // the rows, which blocks divide, and the last dimension. A scalar's
    // chain, or one of other run-time sizes, has no rows: find() turns it
    // down.
    Value output = last.getDpsInits()[0];
    auto type = dyn_cast<MemRefType>(output.getType());
    if (!type || type.getRank() < 2 || ShapedType::isDynamic(type.getShape().back()) ||
        ShapedType::isDynamic(type.getShape().drop_back().back()))
      return;
    for (int64_t d = 0; d + 1 < type.getRank(); ++d) {
      std::optional<OpFoldResult> size = knownSize(output, d);
      if (!size) {
        leading.clear();
        return;
      }
      leading.push_back(*size);
    }
  }

  /// Grows the chain backwards from its last kernel; whether it is one
  /// worth fusing.
  bool find() {
    bool product = endsInProduct = contractionRoles(last).has_value();
    if (leading.size() < 2 || (!product && !isAllParallel(last)))
      return false;
    ops.insert(last);
    SmallVector<Value> worklist = product ? SmallVector<Value>{last.getDpsInputs()[0]}
                                          : SmallVector<Value>(last.getDpsInputs());
    while (!worklist.empty()) {
      Value buffer = worklist.pop_back_val();
      if (intermediates.contains(buffer) || !isIntermediate(buffer))
        continue;
      intermediates.insert(buffer);
      for (Operation *access : accessesOf(buffer)) {
        ops.insert(access);
        for (Value read : buffersRead(access))
          worklist.push_back(read);
      }
    }
    // O's fill, the kernel before the product, joins it.
    Operation *before = last->getPrevNode();
    while (before && isInert(before))
      before = before->getPrevNode();
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(before);
        fill && fill.getOutputs()[0] == last.getDpsInits()[0])
      ops.insert(fill);
    int64_t products = llvm::count_if(ops, [](Operation *op) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      return generic && contractionRoles(generic);
    });
    // A block slices its operands along their rows through their maps: a
    // constant A packed in row groups has none.
    if (llvm::any_of(ops, [](Operation *op) {
          auto generic = dyn_cast<linalg::GenericOp>(op);
          std::optional<Roles> roles = generic ? contractionRoles(generic) : std::nullopt;
          return roles && roles->rowGroup;
        }))
      return false;
    int64_t largest = 0;
    for (Value buffer : intermediates)
      largest = std::max(largest, leastBytesOf(buffer));
    // Two products (attention, an MLP) whose intermediates are worth keeping
    // out of memory; or rows: statistics (a kernel whose body loops over a
    // row) and what uses them.
    bool twoProducts = products >= 2 && largest >= kFuseBytes;
    bool rows = !product && products == 0 && llvm::any_of(ops, isStatistics);
    if ((!twoProducts && !rows) || !consecutive() || !writesOnlyItsOwn() || !indexedOnlyInside() ||
        !chooseRows() || !readsLittle())
      return false;
    // Attention has row statistics (Softmax's) after its first product.
    auto firstProduct = llvm::find_if(ops, [](Operation *op) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      return generic && contractionRoles(generic);
    });
    kind = rows ? "normalize"
                : (std::any_of(firstProduct, ops.end(), isStatistics) ? "attention" : "mlp");
    return true;
  }

  /// Whether `op` computes row statistics: its body loops over a row.
  static bool isStatistics(Operation *op) {
    return !op->getRegion(0).front().getOps<scf::ForOp>().empty();
  }

  /// Replaces the chain by its loop of tasks, at its last kernel; the
  /// kernels it erased.
  llvm::SetVector<Operation *> rewrite() {
    OpBuilder b(last);
    Location loc = FusedLoc::get(
        last.getContext(), llvm::map_to_vector(ops, [](Operation *op) { return op->getLoc(); }));
    int64_t blocks = rowCount() / rows;
    // The tasks: the blocks times the other leading extents, some a run's.
    SmallVector<OpFoldResult> factors(leading.begin(), std::prev(leading.end()));
    factors.push_back(b.getIndexAttr(blocks));
    OpFoldResult tasks = multiplied(b, loc, factors);
    auto forall =
        scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{tasks}, ValueRange{}, std::nullopt);
    int64_t flops = 0;
    for (Operation *op : ops)
      if (auto generic = dyn_cast<linalg::GenericOp>(op); generic && contractionRoles(generic))
        flops += contractionFlops(generic);
    forall->setAttr(kKernelAttr, b.getStringAttr(kind));
    forall->setAttr(kFlopsAttr, b.getI64IntegerAttr(flops));

    b.setInsertionPoint(forall.getBody()->getTerminator());
    // Task t: block t % blocks of the rows, at the leading indices t / blocks.
    Value task = forall.getBody()->getArgument(0);
    SmallVector<Value> at =
        delinearize(b, loc, arith::DivUIOp::create(b, loc, task, index(b, loc, blocks)),
                    ArrayRef(leading).drop_back());
    Value block = arith::RemUIOp::create(b, loc, task, index(b, loc, blocks));
    at.push_back(arith::MulIOp::create(b, loc, block, index(b, loc, rows)));

    IRMapping mapping;
    for (Value buffer : intermediates) {
      auto type = cast<MemRefType>(buffer.getType());
      SmallVector<int64_t> shape(leading.size(), 1);
      shape.back() = rows;
      shape.push_back(type.getShape().back());
      mapping.map(buffer,
                  memref::AllocaOp::create(b, loc, MemRefType::get(shape, type.getElementType()),
                                           b.getI64IntegerAttr(kCacheLine)));
    }
    for (Operation *op : ops) {
      auto linalgOp = cast<linalg::LinalgOp>(op);
      SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
      // Outside buffers are sliced for each kernel as it reads them.
      IRMapping local = mapping;
      op->walk([&](memref::LoadOp load) {
        Value value = load.getMemRef();
        if (local.contains(value))
          return;
        // Its leading indices are the kernel's own (indexedOnlyInside()).
        auto type = cast<MemRefType>(value.getType());
        SmallVector<OpFoldResult> offsets, sizes, strides;
        for (int64_t i = 0; i < type.getRank(); ++i) {
          strides.push_back(b.getIndexAttr(1));
          bool leadingIndex = i < int64_t(leading.size());
          offsets.push_back(leadingIndex ? OpFoldResult(at[i]) : b.getIndexAttr(0));
          sizes.push_back(b.getIndexAttr(!leadingIndex                      ? type.getDimSize(i)
                                         : i + 1 == int64_t(leading.size()) ? rows
                                                                            : 1));
        }
        local.map(value,
                  memref::SubViewOp::create(b, loc, value, offsets, sizes, strides).getResult());
      });
      for (OpOperand &operand : op->getOpOperands()) {
        Value value = operand.get();
        if (local.contains(value) || !isa<MemRefType>(value.getType()))
          continue;
        // The block's slice of an operand read from outside the chain.
        SmallVector<OpFoldResult> offsets, sizes, strides;
        AffineMap map = maps[operand.getOperandNumber()];
        for (auto [expr, size] : llvm::zip(map.getResults(), sliceShape(linalgOp, map, value))) {
          strides.push_back(b.getIndexAttr(1));
          sizes.push_back(b.getIndexAttr(size));
          if (auto constant = dyn_cast<AffineConstantExpr>(expr))
            offsets.push_back(b.getIndexAttr(constant.getValue()));
          else if (std::optional<unsigned> tiled = leadingResult(linalgOp, expr))
            offsets.push_back(at[*tiled]);
          else
            offsets.push_back(b.getIndexAttr(0));
        }
        local.map(value,
                  memref::SubViewOp::create(b, loc, value, offsets, sizes, strides).getResult());
      }
      b.clone(*op, local);
    }
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    for (Value buffer : intermediates)
      eraseIfDead(buffer);
    return ops;
  }

private:
  /// Which leading dimension of `op`'s output the loop dimension `expr`
  /// is, if one.
  std::optional<unsigned> leadingResult(linalg::LinalgOp op, AffineExpr expr) {
    std::optional<unsigned> position = op.getIndexingMapsArray().back().getResultPosition(expr);
    if (position && *position < leading.size())
      return position;
    return std::nullopt;
  }

  /// The shape of the slice of `buffer`, read through `map` by `op`, that
  /// one block reads: a leading dimension 1 (the block's rows along the
  /// rows), a constant index 1, other dimensions whole.
  SmallVector<int64_t> sliceShape(linalg::LinalgOp op, AffineMap map, Value buffer) {
    SmallVector<int64_t> shape;
    for (auto [result, expr] : llvm::enumerate(map.getResults())) {
      if (isa<AffineConstantExpr>(expr))
        shape.push_back(1);
      else if (std::optional<unsigned> tiled = leadingResult(op, expr))
        shape.push_back(*tiled + 1 == leading.size() ? rows : 1);
      else
        shape.push_back(cast<MemRefType>(buffer.getType()).getDimSize(result));
    }
    return shape;
  }

  /// Whether each block reads little enough of every operand from outside
  /// the chain to keep it in cache for the next block (K and V of one
  /// head, not a layer's weights).
  bool readsLittle() {
    for (Operation *op : ops) {
      auto linalgOp = cast<linalg::LinalgOp>(op);
      for (OpOperand *input : linalgOp.getDpsInputOperands()) {
        Value value = input->get();
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type || intermediates.contains(value))
          continue;
        int64_t bytes = type.getElementTypeBitWidth() / 8;
        for (int64_t size : sliceShape(linalgOp, linalgOp.getMatchingIndexingMap(input), value)) {
          if (ShapedType::isDynamic(size))
            return false;
          bytes *= size;
        }
        if (bytes > kReadBytes)
          return false;
      }
    }
    return true;
  }

  static Value index(OpBuilder &b, Location loc, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// The loop dimensions of `op` that its output's leading dimensions are,
  /// in order, or nothing.
  std::optional<SmallVector<unsigned>> tiledDims(linalg::LinalgOp op) {
    AffineMap map = op.getIndexingMapsArray().back();
    Value output = op.getDpsInits()[0];
    auto type = dyn_cast<MemRefType>(output.getType());
    if (!type || type.getRank() != int64_t(leading.size()) + 1 || !leadsWith(output))
      return std::nullopt;
    SmallVector<unsigned> dims;
    for (unsigned i = 0; i < leading.size(); ++i) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
      if (!dim)
        return std::nullopt;
      dims.push_back(dim.getPosition());
    }
    return dims;
  }

  /// A buffer of @main, allocated as it is (no view), with the chain's
  /// leading extents, that every kernel touching it (a generic or a fill,
  /// on all parallel loops but a product's reduction) reads or writes
  /// along its own leading loop dimensions.
  bool isIntermediate(Value buffer) {
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc || buffer == last.getDpsInits()[0] ||
        alloc.getType().getRank() != int64_t(leading.size()) + 1 || !leadsWith(buffer) ||
        !alloc.getType().getLayout().isIdentity())
      return false;
    for (OpOperand &use : buffer.getUses()) {
      auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!user) {
        // Loads in the body of a kernel of @main, which joins the chain
        // (indexedOnlyInside() checks their indices).
        auto load = dyn_cast<memref::LoadOp>(use.getOwner());
        Operation *kernel = load ? last->getBlock()->findAncestorOpInBlock(*load) : nullptr;
        if (!kernel || !isa<linalg::GenericOp>(kernel) || last->isBeforeInBlock(kernel))
          return false;
        continue;
      }
      // A buffer read after the chain (a residual) is no intermediate.
      if (!isa<linalg::GenericOp, linalg::FillOp>(user) || user->getBlock() != last->getBlock() ||
          last->isBeforeInBlock(user))
        return false;
      // A normalization's chain stops at products: their output is its input.
      auto generic = dyn_cast<linalg::GenericOp>(user.getOperation());
      if (!endsInProduct && generic && contractionRoles(generic))
        return false;
      std::optional<SmallVector<unsigned>> dims = tiledDims(user);
      if (!dims)
        return false;
      AffineMap map = user.getMatchingIndexingMap(&use);
      for (auto [i, dim] : llvm::enumerate(*dims))
        if (map.getResult(i) != getAffineDimExpr(dim, user.getContext()))
          return false;
    }
    return true;
  }

  /// The buffers `op` reads: its operands, and what its body loads.
  static SmallVector<Value> buffersRead(Operation *op) {
    SmallVector<Value> read(op->getOperands());
    op->walk([&](memref::LoadOp load) { read.push_back(load.getMemRef()); });
    return read;
  }

  /// Whether nothing but inert ops lies between the chain's kernels.
  bool consecutive() {
    Operation *first = ops.front();
    for (Operation *op : ops) {
      if (last->isBeforeInBlock(op))
        return false;
      if (op->isBeforeInBlock(first))
        first = op;
    }
    for (Operation *op = first; op != last; op = op->getNextNode())
      if (!ops.contains(op) && !isInert(op))
        return false;
    // In block order, as they will run.
    SmallVector<Operation *> ordered(ops.begin(), ops.end());
    llvm::sort(ordered, [](Operation *l, Operation *r) { return l->isBeforeInBlock(r); });
    ops = llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
    return true;
  }

  /// Whether the chain writes nothing outside it but O (by the last
  /// product and its fill), and reads O nowhere else: a task reads the
  /// other tasks' blocks of a buffer as they write them.
  bool writesOnlyItsOwn() {
    Value output = rootOf(last.getDpsInits()[0]);
    for (Operation *op : ops) {
      bool writesOutput = op == last.getOperation() || isa<linalg::FillOp>(op);
      for (Value init : cast<linalg::LinalgOp>(op).getDpsInits())
        if (!intermediates.contains(init) && !(writesOutput && rootOf(init) == output))
          return false;
      if (writesOutput)
        continue;
      for (Value read : buffersRead(op))
        if (isa<MemRefType>(read.getType()) && rootOf(read) == output)
          return false;
    }
    return true;
  }

  /// Whether the kernels' bodies use their loop indices only to load, and
  /// load intermediates (which become the block's own buffers) or outside
  /// buffers of the chain's leading extents at the kernel's own leading
  /// indices (which become the block's slices): tiled, a loop index counts
  /// from the block's start.
  bool indexedOnlyInside() {
    for (Operation *op : ops) {
      std::optional<SmallVector<unsigned>> dims = tiledDims(cast<linalg::LinalgOp>(op));
      WalkResult walk = op->walk([&](Operation *inner) {
        // An outside buffer loaded at its own row stands for the block's
        // rows of it in the body, so it may not be an operand as well,
        // sliced through the operand's own map.
        if (auto load = dyn_cast<memref::LoadOp>(inner))
          return intermediates.contains(load.getMemRef()) ||
                         (dims && atOwnRow(load, *dims) &&
                          !llvm::is_contained(op->getOperands(), load.getMemRef()))
                     ? WalkResult::advance()
                     : WalkResult::interrupt();
        if (auto indexOp = dyn_cast<linalg::IndexOp>(inner))
          for (Operation *user : indexOp->getUsers())
            if (!isa<memref::LoadOp>(user))
              return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return false;
    }
    return true;
  }

  /// Whether `load` reads a buffer of the chain's leading extents (and
  /// more) at the loop indices `dims` of its kernel's leading dimensions
  /// (0 for a dimension of 1), and along the rest at indices that are no
  /// loop index.
  bool atOwnRow(memref::LoadOp load, ArrayRef<unsigned> dims) {
    if (!leadsWith(load.getMemRef()))
      return false;
    for (auto [i, index] : llvm::enumerate(load.getIndices())) {
      auto loopIndex = index.getDefiningOp<linalg::IndexOp>();
      if (i >= leading.size()) {
        if (loopIndex)
          return false;
        continue;
      }
      if (loopIndex ? loopIndex.getDim() != dims[i]
                    : !(isConstantIntValue(leading[i], 1) && isConstantIntValue(index, 0)))
        return false;
    }
    return true;
  }

  /// The rows of a block: a divisor of the row count (so that every task
  /// has the same static shapes), preferring a register tile's 12 rows, its
  /// intermediates within kStackBytes.
  bool chooseRows() {
    int64_t rowBytes = 0;
    for (Value buffer : intermediates) {
      auto type = cast<MemRefType>(buffer.getType());
      rowBytes += type.getElementTypeBitWidth() / 8 * type.getShape().back();
    }
    for (int64_t candidate : {12, 16, 8, 24, 10, 6, 4})
      if (rowCount() % candidate == 0 && candidate * rowBytes <= kStackBytes) {
        rows = candidate;
        return true;
      }
    return false;
  }

  /// The rows: the last leading extent, static (see the constructor).
  int64_t rowCount() const { return *getConstantIntValue(leading.back()); }

  /// Whether `buffer`'s first dimensions are the chain's leading extents
  /// (the same values where they are a run's), and the others static.
  bool leadsWith(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getRank() <= int64_t(leading.size()))
      return false;
    for (auto [d, extent] : llvm::enumerate(leading)) {
      std::optional<OpFoldResult> size = knownSize(buffer, int64_t(d));
      if (!size || !isEqualConstantIntOrValue(*size, extent))
        return false;
    }
    return llvm::none_of(type.getShape().drop_front(leading.size()), ShapedType::isDynamic);
  }

  linalg::GenericOp last;
  /// The extents of the output's dimensions but the last: static, or the
  /// run-time sizes its buffer was allocated with.
  SmallVector<OpFoldResult> leading;
  llvm::SetVector<Operation *> ops;
  llvm::SetVector<Value> intermediates;
  int64_t rows = 0;
  /// What the fused kernel is: attention, an MLP, or a row normalization.
  StringRef kind;
  bool endsInProduct = false;
};

struct FuseRows : impl::FuseRowsBase<FuseRows> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    // Chains end in a product (attention) or in any kernel on buffers that
    // may read row statistics (a normalization).
    SmallVector<linalg::GenericOp> ends;
    for (auto generic : function.getBody().front().getOps<linalg::GenericOp>())
      if (generic.hasPureBufferSemantics() && generic.getNumDpsInits() == 1)
        ends.push_back(generic);
    // From the last: an earlier kernel in a chain is then gone.
    llvm::SmallPtrSet<Operation *, 8> erased;
    for (linalg::GenericOp end : llvm::reverse(ends)) {
      if (erased.contains(end))
        continue;
      Chain chain(end);
      if (chain.find())
        erased.insert_range(chain.rewrite());
    }
  }
};

} // namespace
} // namespace kiln
