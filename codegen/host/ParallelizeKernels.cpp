// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ParallelizeKernels.cpp - split big kernels into parallel tasks -----===//
//
// Every linalg op left at the top of a function (elementwise ops, gathers,
// fills, reductions, pooling: everything but the products, which
// kiln-vectorize-contractions already split) that does enough work is tiled
// along its outermost parallel dimension into an scf.forall, whose tasks
// kiln-outline-parallel hands to the runtime's threads; one over rows a
// run gives, along its last such dimension, the tasks counted at run time.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

#define GEN_PASS_DEF_PARALLELIZEKERNELS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// Below this much work (iterations of the kernel's loops and of the loops
/// in its body) a kernel stays whole: handing tasks to a second thread
/// costs about 6 microseconds, what a vectorized elementwise kernel of
/// 65536 elements takes (tools/bench/dispatch.py).
constexpr int64_t kParallelWork = 1 << 17;
/// The work a task should have at least.
constexpr int64_t kTaskWork = 1 << 14;

/// The iterations of the loops in `block` with constant trip counts (a
/// row's statistics, a pooling window), each counting the loops it holds;
/// 1 for a block without loops.
int64_t blockWork(Block &block) {
  int64_t work = 1;
  for (auto loop : block.getOps<scf::ForOp>())
    if (std::optional<APInt> trips = loop.getStaticTripCount())
      work += int64_t(trips->getZExtValue()) * blockWork(*loop.getBody());
  return work;
}

/// A tile size near `minimum` (from half to twice it) that divides
/// `range`, so that every task's buffers have static shapes (the vector
/// passes after want them); `minimum` itself when none does.
int64_t evenTile(int64_t range, int64_t minimum) {
  for (int64_t tile = minimum; tile <= 2 * minimum && tile < range; ++tile)
    if (range % tile == 0)
      return tile;
  for (int64_t tile = minimum - 1; 2 * tile >= minimum && tile > 0; --tile)
    if (range % tile == 0)
      return tile;
  return minimum;
}

/// The work a task of a kernel whose sizes a run gives has at least: a
/// run splits only when it has twice as much, what kParallelWork asks of a
/// static kernel.
constexpr int64_t kRunTaskWork = kParallelWork / 2;

/// Tile sizes for a kernel whose leading dimensions a run gives (a batch
/// and a sequence over static rows of hidden units): the last of them in
/// tiles of kRunTaskWork's worth of rows (a task takes every index of the
/// ones before: kiln-outline-parallel hands out one-dimensional loops); a
/// run then counts its tasks from its sizes, one when it is small (which
/// the runtime runs on the calling thread). Nothing when no static size
/// follows them, a size after them is a run's too, or one of them is no
/// parallel dimension.
std::optional<SmallVector<int64_t>> runTaskTiles(linalg::LinalgOp op, ArrayRef<int64_t> ranges,
                                                 ArrayRef<utils::IteratorType> iterators) {
  size_t rows = 0;
  while (rows < ranges.size() && (ShapedType::isDynamic(ranges[rows]) || ranges[rows] == 1))
    ++rows;
  if (rows == ranges.size() || llvm::any_of(ranges.drop_front(rows), ShapedType::isDynamic) ||
      llvm::any_of(iterators.take_front(rows),
                   [](utils::IteratorType t) { return t != utils::IteratorType::parallel; }))
    return std::nullopt;
  int64_t inner = blockWork(op->getRegion(0).front());
  for (int64_t range : ranges.drop_front(rows))
    inner *= range;
  SmallVector<int64_t> tiles(ranges.size(), 0);
  for (size_t d = rows; d-- > 0;)
    if (ShapedType::isDynamic(ranges[d])) {
      tiles[d] = llvm::divideCeil(kRunTaskWork, inner);
      break;
    }
  return tiles;
}

/// Tile sizes that split `op`'s outermost dimension into tasks of at least
/// kTaskWork iterations, or nothing when that makes one task.
std::optional<SmallVector<int64_t>> taskTiles(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (ranges.empty())
    return std::nullopt;
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return runTaskTiles(op, ranges, iterators);
  int64_t total = blockWork(op->getRegion(0).front());
  for (int64_t range : ranges)
    total *= range;
  if (total < kParallelWork)
    return std::nullopt;
  // The first dimension larger than 1, if parallel, is split into tiles of
  // at least kTaskWork (less than the kernel has, since it has more than
  // kParallelWork): a one-dimensional loop of tasks.
  SmallVector<int64_t> tiles(ranges.size(), 0);
  int64_t tasks = 1, inner = total;
  for (size_t d = 0; d < ranges.size(); ++d) {
    inner /= ranges[d];
    if (ranges[d] == 1)
      continue;
    if (iterators[d] == utils::IteratorType::parallel) {
      tiles[d] = evenTile(ranges[d], llvm::divideCeil(kTaskWork, inner));
      tasks = llvm::divideCeil(ranges[d], tiles[d]);
    }
    break;
  }
  if (tasks < 2)
    return std::nullopt;
  return tiles;
}

struct ParallelizeKernels : impl::ParallelizeKernelsBase<ParallelizeKernels> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<linalg::LinalgOp> kernels;
    for (Operation &op : func.getBody().front())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
          linalgOp && linalgOp.hasPureBufferSemantics())
        kernels.push_back(linalgOp);
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : kernels) {
      std::optional<SmallVector<int64_t>> tiles = taskTiles(op);
      if (!tiles)
        continue;
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), *tiles));
      rewriter.setInsertionPoint(op);
      auto tilingOp = cast<TilingInterface>(op.getOperation());
      if (failed(scf::tileUsingSCF(rewriter, tilingOp, options))) {
        op->emitError("internal error: cannot split this kernel into tasks");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
} // namespace kiln
