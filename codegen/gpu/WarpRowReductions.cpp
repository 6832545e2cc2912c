// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- WarpRowReductions.cpp - a warp for each row's statistics -----------===//
//
// The kernel generators compute a row's statistics (Softmax's maximum and
// sum, LayerNormalization's mean and deviation) as an all-parallel generic
// whose body loops over the row, once per statistic. On a GPU that is one
// thread per row walking it alone. Here each such generic becomes a launch
// with a warp (NVIDIA, 32 lanes) or wavefront (AMD, 64) per row: the lanes
// take every 32nd (64th) element of each loop, then combine their partial results with butterfly
// shuffles, so that every lane holds the row's total for what follows (the variance's loop needs
// the mean); lane 0 stores the results.
//
// A loop qualifies when it runs from 0 by 1 and each value it carries is
// combined with one associative operation: addf (or fma into it), maximumf
// or minimumf. Lanes summing in another order change the rounding of a
// sum, as any parallel reduction does.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace kiln {

#define GEN_PASS_DEF_WARPROWREDUCTIONS
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

/// A block's threads: 8 warps of 32, or 4 wavefronts of 64.
constexpr int64_t kBlockThreads = 256;

enum class Combiner { Add, Max, Min };

/// How `loop` combines its carried value `i` with each element.
std::optional<Combiner> combinerOf(scf::ForOp loop, unsigned i) {
  Value carried = loop.getRegionIterArgs()[i];
  Operation *update = loop.getBody()->getTerminator()->getOperand(i).getDefiningOp();
  if (!update || update->getBlock() != loop.getBody() || !carried.hasOneUse() ||
      *carried.getUsers().begin() != update)
    return std::nullopt;
  if (isa<arith::AddFOp>(update))
    return Combiner::Add;
  if (isa<arith::MaximumFOp>(update))
    return Combiner::Max;
  if (isa<arith::MinimumFOp>(update))
    return Combiner::Min;
  if (auto fma = dyn_cast<math::FmaOp>(update); fma && fma.getC() == carried)
    return Combiner::Add;
  return std::nullopt;
}

/// Whether `loop` runs over a row from 0 by 1, at least a warp's worth,
/// carrying only values it combines.
bool isRowLoop(scf::ForOp loop, int64_t warp) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (lower != 0 || step != 1 || !upper || *upper < warp || loop.getNumRegionIterArgs() == 0)
    return false;
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
    if (!combinerOf(loop, i))
      return false;
  return true;
}

/// A generic of row statistics: all parallel, on buffers, outputs by
/// identity and unread, and a body whose loops are all row loops.
bool isRowStatistics(linalg::GenericOp op, int64_t warp) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() != op.getNumParallelLoops() ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isIdentity() ||
        !op.getMatchingBlockArgument(&init).use_empty())
      return false;
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return llvm::all_of(map.getResults(), llvm::IsaPred<AffineDimExpr, AffineConstantExpr>);
      }))
    return false;
  bool loops = false;
  for (Operation &inner : op.getRegion().front().without_terminator()) {
    auto loop = dyn_cast<scf::ForOp>(inner);
    if (loop && !isRowLoop(loop, warp))
      return false;
    if (!loop && inner.getNumRegions() != 0)
      return false;
    loops |= bool(loop);
  }
  return loops;
}

struct Builder : IndexArithmetic {
  Builder(OpBuilder &b, Location loc, int64_t warp) : IndexArithmetic(b, loc), warp(warp) {}
  int64_t warp;

  /// `value` combined across the warp's lanes: every lane gets the total.
  Value acrossWarp(Value value, Combiner combiner) {
    Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), warp);
    for (int64_t offset = warp / 2; offset > 0; offset /= 2) {
      Value distance = arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
      Value other = gpu::ShuffleOp::create(b, loc, value, distance, width, gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      switch (combiner) {
      case Combiner::Add:
        value = arith::AddFOp::create(b, loc, value, other);
        break;
      case Combiner::Max:
        value = arith::MaximumFOp::create(b, loc, value, other);
        break;
      case Combiner::Min:
        value = arith::MinimumFOp::create(b, loc, value, other);
        break;
      }
    }
    return value;
  }

  /// The generic's body for the row at loop indices `at`, lane `lane` of
  /// its warp: what it yields, the same on every lane.
  SmallVector<Value> body(linalg::GenericOp op, ArrayRef<Value> at, Value lane) {
    Block &block = op.getRegion().front();
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands())
      mapping.map(op.getMatchingBlockArgument(input),
                  memref::LoadOp::create(b, loc, input->get(),
                                         indicesAt(b, loc, op.getMatchingIndexingMap(input), at)));
    Value lanes = constant(warp);
    for (Operation &inner : block.without_terminator()) {
      if (auto position = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(position.getResult(), at[position.getDim()]);
        continue;
      }
      Operation *copy = b.clone(inner, mapping);
      auto loop = dyn_cast<scf::ForOp>(copy);
      if (!loop)
        continue;
      // Each lane takes every 32nd (64th) element, from its own.
      loop.getLowerBoundMutable().assign(lane);
      loop.getStepMutable().assign(lanes);
      auto original = cast<scf::ForOp>(inner);
      for (unsigned i = 0; i < loop.getNumResults(); ++i)
        mapping.map(original.getResult(i), acrossWarp(loop.getResult(i), *combinerOf(original, i)));
    }
    SmallVector<Value> results;
    for (Value yielded : block.getTerminator()->getOperands())
      results.push_back(mapping.lookupOrDefault(yielded));
    return results;
  }
};

struct WarpRowReductions : impl::WarpRowReductionsBase<WarpRowReductions> {
  using WarpRowReductionsBase::WarpRowReductionsBase;

  void runOnOperation() override {
    int64_t warp = warpWidth, warpsPerBlock = kBlockThreads / warp;
    SmallVector<linalg::GenericOp> ops;
    for (auto op : getOperation().getOps<linalg::GenericOp>())
      if (isRowStatistics(op, warp))
        ops.push_back(op);
    for (linalg::GenericOp op : ops) {
      Location loc = op.getLoc();
      OpBuilder b(op);
      Builder build(b, loc, warp);
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t rows = 1;
      for (int64_t extent : ranges)
        rows *= extent;
      Value one = build.constant(1);
      auto launch =
          gpu::LaunchOp::create(b, loc, build.constant(llvm::divideCeil(rows, warpsPerBlock)), one,
                                one, build.constant(kBlockThreads), one, one);
      launch->setAttr(kKernelAttr, b.getStringAttr("reduce"));
      b.setInsertionPointToStart(&launch.getBody().front());
      Value tid = launch.getThreadIds().x;
      Value lane = build.rem(tid, warp);
      Value row = build.add(build.mul(launch.getBlockIds().x, warpsPerBlock), build.div(tid, warp));
      // The row is the same on all of a warp's lanes, so the shuffles
      // inside run on full warps.
      Value inside = build.lessThan(row, rows);
      auto ifInside = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifInside.thenBlock());
        SmallVector<Value> at = delinearize(b, loc, row, ranges);
        SmallVector<Value> results = build.body(op, at, lane);
        Value first =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, build.constant(0));
        auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
        b.setInsertionPointToStart(ifFirst.thenBlock());
        for (auto [result, init] : llvm::zip(results, op.getDpsInits()))
          memref::StoreOp::create(b, loc, result, init, at);
      }
      gpu::TerminatorOp::create(b, loc);
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
