// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ProductFusion.cpp - what a matrix-unit launch takes in -------------===//

#include "codegen/gpu/ProductFusion.h"

#include "codegen/common/Buffers.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::products {

using namespace mlir;

std::optional<Product> matchProduct(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics() ||
      !isMultiplyAdd(op))
    return std::nullopt;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.getElementType().isF32())
      return std::nullopt;
  }
  Product product;
  product.op = op;
  product.a = op.getDpsInputs()[0];
  product.b = op.getDpsInputs()[1];
  product.c = op.getDpsInits()[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  product.mapA = maps[0];
  product.mapB = maps[1];
  product.mapC = maps[2];
  if (!llvm::all_of(maps, [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  product.ranges = op.getStaticLoopRanges();
  std::optional<unsigned> k;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d) {
    auto uses = [&](AffineMap map) { return map.isFunctionOfDim(d); };
    bool inA = uses(product.mapA), inB = uses(product.mapB), inC = uses(product.mapC);
    int64_t size = product.ranges[d];
    // The batch and the rows may be given at run time, nothing else.
    bool dynamic = ShapedType::isDynamic(size);
    auto times = [&](int64_t &count) {
      count = dynamic || ShapedType::isDynamic(count) ? ShapedType::kDynamic : count * size;
    };
    if (dynamic && (iterators[d] == utils::IteratorType::reduction || !inA || !inC))
      return std::nullopt;
    if (iterators[d] == utils::IteratorType::reduction) {
      if (!inA || !inB || inC)
        return std::nullopt;
      if (size == 1)
        continue; // always index 0
      if (k)
        return std::nullopt; // one reduction loop only
      k = d;
    } else if (inA && inB && inC) {
      product.batch.push_back(d);
      times(product.numBatch);
    } else if (inA && inC) {
      product.rows.push_back(d);
      times(product.numRows);
    } else if (inB && inC) {
      product.cols.push_back(d);
      product.numCols *= size;
    } else if (size != 1) {
      return std::nullopt;
    }
  }
  if (!k)
    return std::nullopt;
  product.k = *k;
  // An 8-bit product's operands hold E4M3 values times their scales.
  if (auto scales = op->getAttrOfType<DenseF32ArrayAttr>(kScalesAttr)) {
    if (scales.size() != 2)
      return std::nullopt;
    product.scaleA = scales[0];
    product.scaleB = scales[1];
  }
  return product;
}

void sizeLoops(OpBuilder &b, Location loc, Product &product) {
  product.extents.clear();
  for (auto [d, range] : llvm::enumerate(product.ranges)) {
    if (!ShapedType::isDynamic(range)) {
      product.extents.push_back(b.getIndexAttr(range));
      continue;
    }
    // A dynamic loop is a row or batch loop: A runs along it.
    std::optional<unsigned> along = product.mapA.getResultPosition(b.getAffineDimExpr(unsigned(d)));
    assert(along && "a dynamic loop of a product runs along A");
    product.extents.push_back(bufferSize(b, loc, product.a, *along));
  }
  auto count = [&](ArrayRef<unsigned> loops) {
    return multiplied(
        b, loc, llvm::map_to_vector(loops, [&](unsigned loop) { return product.extents[loop]; }));
  };
  product.batchCount = count(product.batch);
  product.rowCount = count(product.rows);
}

namespace {

/// The buffers, by root, that `op` (a kernel on buffers) may write.
SmallVector<Value> writtenRoots(Operation *op) {
  SmallVector<Value> roots;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    for (Value init : linalgOp.getDpsInits())
      roots.push_back(rootOf(init));
    return roots;
  }
  op->walk([&](Operation *inner) {
    if (auto store = dyn_cast<memref::StoreOp>(inner))
      roots.push_back(rootOf(store.getMemRef()));
  });
  return roots;
}

/// A generic body the launch can compute at any index: no regions (no
/// loops over windows or rows) and nothing but arithmetic and loads.
bool isComputable(linalg::GenericOp op) {
  if (!isAllParallel(op) || !op.getIndexingMapsArray().back().isIdentity() ||
      !llvm::all_of(op.getIndexingMapsArray(), onlyDimsAndConstants))
    return false;
  Block &body = op.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return false;
  return llvm::all_of(body.without_terminator(), [](Operation &inner) {
    return inner.getNumRegions() == 0 && (isMemoryEffectFree(&inner) || isa<memref::LoadOp>(inner));
  });
}

/// The buffers, by root, `op` (a fill, a transpose or a computable
/// generic) reads.
SmallVector<Value> readRoots(Operation *op) {
  SmallVector<Value> roots;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return {rootOf(transpose.getInput())};
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return roots;
  for (Value input : generic.getDpsInputs())
    roots.push_back(rootOf(input));
  generic.getRegion().walk([&](memref::LoadOp load) { roots.push_back(rootOf(load.getMemRef())); });
  return roots;
}

/// Whether nothing from after `writer` up to `anchor` writes a buffer in
/// `roots`.
bool unchangedUntil(Operation *writer, Operation *anchor, ArrayRef<Value> roots) {
  for (Operation *op = writer->getNextNode(); op != anchor; op = op->getNextNode()) {
    if (isInert(op))
      continue;
    if (!isa<linalg::LinalgOp, gpu::LaunchOp>(op))
      return false;
    if (llvm::any_of(writtenRoots(op), [&](Value root) { return llvm::is_contained(roots, root); }))
      return false;
  }
  return true;
}

/// Records the writer of `buffer` in `fusion` if the launch can compute it
/// in place of reading it: a fill, a transpose or a computable generic
/// writing the whole allocation `buffer` views, before `reader`, the only
/// other op that touches it, with its own inputs unchanged until the
/// launch. Then the same for what that writer reads. With `isC`, ops
/// after the product may touch the buffer too: the launch stores C whole,
/// or the epilogue it takes in was C's last reader.
void fuseWriter(Value buffer, Operation *reader, Fusion &fusion, bool isC = false) {
  memref::AllocOp alloc = reshapedAlloc(buffer);
  if (!alloc || fusion.writers.count(alloc.getResult()))
    return;
  SmallVector<Operation *> accesses = accessesOf(alloc.getResult());
  Operation *writer = nullptr;
  for (Operation *access : accesses) {
    if (auto fill = dyn_cast<linalg::FillOp>(access);
        fill && reshapedAlloc(fill.getOutputs()[0]) == alloc)
      writer = fill;
    else if (auto generic = dyn_cast<linalg::GenericOp>(access);
             generic && generic.getNumDpsInits() == 1 &&
             generic.getDpsInits()[0] == alloc.getResult() && isComputable(generic))
      writer = generic;
    else if (auto transpose = dyn_cast<linalg::TransposeOp>(access);
             transpose && transpose.getInit() == alloc.getResult())
      writer = transpose;
    else if (access != reader && !(isC && reader->isBeforeInBlock(access)))
      return;
  }
  if (!writer || writer->getBlock() != reader->getBlock() || !writer->isBeforeInBlock(reader))
    return;
  for (Operation *between = writer->getNextNode(); between != reader;
       between = between->getNextNode())
    if (llvm::is_contained(accesses, between))
      return;
  SmallVector<Value> reads = readRoots(writer);
  if (!unchangedUntil(writer, fusion.anchor, reads))
    return;
  fusion.writers[alloc.getResult()] = writer;
  for (Value read : reads)
    fuseWriter(read, writer, fusion);
}

/// The epilogue of `op`: the next kernel, when it is a computable generic
/// that reads C where it was written (by identity) and C dies there, and it
/// writes none of what the product reads.
linalg::GenericOp findEpilogue(linalg::GenericOp op) {
  Operation *next = op->getNextNode();
  while (next && isInert(next))
    next = next->getNextNode();
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
  memref::AllocOp alloc = reshapedAlloc(op.getDpsInits()[0]);
  if (!epilogue || !alloc || !isComputable(epilogue))
    return {};
  for (Operation *access : accessesOf(alloc.getResult())) {
    bool writesC = isa<linalg::FillOp, linalg::GenericOp>(access) && access->isBeforeInBlock(op);
    if (access != op && access != epilogue && !writesC)
      return {};
  }
  bool readsC = false;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    if (rootOf(input->get()) != alloc.getResult())
      continue;
    if (!epilogue.getMatchingIndexingMap(input).isIdentity() || !reshapedAlloc(input->get()))
      return {};
    readsC = true;
  }
  // Each thread reads what it overwrites there, or other buffers; and C
  // only as its inputs (its loads would find C never stored).
  Value output = rootOf(epilogue.getDpsInits()[0]);
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (rootOf(input->get()) == output && !epilogue.getMatchingIndexingMap(input).isIdentity())
      return {};
  WalkResult loads = epilogue.getRegion().walk([&](memref::LoadOp load) {
    Value root = rootOf(load.getMemRef());
    return root == output || root == alloc.getResult() ? WalkResult::interrupt()
                                                       : WalkResult::advance();
  });
  if (loads.wasInterrupted())
    return {};
  if (!readsC || output == rootOf(op.getDpsInputs()[0]) || output == rootOf(op.getDpsInputs()[1]))
    return {};
  return epilogue;
}

} // namespace

/// The tile the limit below counts blocks of: both vendors' large tile.
constexpr int64_t kCountedTile = 64;

/// The most blocks of 64x64 that may each compute the same element of A
/// or B with a taken-in writer. Every block along B's columns stages the
/// same tile of A, so a writer of A taken in runs once per column block.
/// Computed staging already takes more issue slots per stage than the
/// tensor cores (a rounding's dozen integer operations, or a gather's index
/// arithmetic, for each of 32 elements a thread, against 32 mma.sync a
/// warp), so past two such blocks the recomputation should outweigh the
/// pass over memory it saves. An estimate from issue slots, not yet a
/// measurement: the GPU check's GEMMs (whose operands are rounded by
/// kernels of their own) and ResNet-50 (whose layer3 and layer4 gathers are
/// too) will tell.
constexpr int64_t kMaxRecomputation = 2;

Fusion fuse(const Product &product) {
  linalg::GenericOp op = product.op;
  for (linalg::GenericOp epilogue : {findEpilogue(op), linalg::GenericOp()}) {
    Fusion fusion;
    fusion.epilogue = epilogue;
    fusion.anchor = epilogue ? epilogue.getOperation() : op.getOperation();
    fuseWriter(product.c, op, fusion, /*isC=*/true);
    // (Rows given at run time count as many.)
    if (llvm::divideCeil(product.numCols, kCountedTile) <= kMaxRecomputation)
      fuseWriter(product.a, op, fusion);
    if (!ShapedType::isDynamic(product.numRows) &&
        llvm::divideCeil(product.numRows, kCountedTile) <= kMaxRecomputation)
      fuseWriter(product.b, op, fusion);
    if (!epilogue)
      return fusion;
    Value output = rootOf(epilogue.getDpsInits()[0]);
    if (llvm::none_of(fusion.writers, [&](auto &entry) {
          return llvm::is_contained(readRoots(entry.second), output);
        }))
      return fusion;
  }
  llvm_unreachable("the second try fuses no epilogue");
}

} // namespace kiln::products
