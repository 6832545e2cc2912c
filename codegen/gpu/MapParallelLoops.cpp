// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MapParallelLoops.cpp - parallel loops onto blocks of threads -------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {

#define GEN_PASS_DEF_MAPPARALLELLOOPS
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

constexpr int64_t kThreadsPerBlock = 256;
/// Neighbours a thread takes along the innermost loop where it can: 16
/// bytes of 32-bit elements, one vector load or store each.
constexpr int64_t kVector = 4;

/// Whether each run of kVector elements of `memref`'s innermost dimension
/// that starts at a multiple of kVector is 16 bytes aligned: the dimension
/// contiguous, the offset and every other stride multiples of kVector, the
/// elements 32-bit. (kiln's buffers start 16-byte aligned or better: the
/// arena's offsets, the weights' and the runtime's allocations.)
bool alignedRuns(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || type.getRank() == 0 || !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() != 32)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1 ||
      ShapedType::isDynamic(offset) || offset % kVector != 0)
    return false;
  return llvm::all_of(ArrayRef(strides).drop_back(), [](int64_t stride) {
    return !ShapedType::isDynamic(stride) && stride % kVector == 0;
  });
}

/// Whether a thread of `loop` can take kVector neighbours along its
/// innermost loop (from 0 by 1, `trip` iterations): the body has no
/// regions; the innermost index is only ever the last index of loads and
/// stores of aligned runs, whose other indices do not depend on it; every
/// store is one of those; and what depends on the loads is elementwise.
/// Fills `varying` with the values that differ between the neighbours.
bool vectorizable(scf::ParallelOp loop, int64_t trip, llvm::DenseSet<Value> &varying) {
  if (trip % kVector != 0)
    return false;
  Value iv = loop.getInductionVars().back();
  auto depends = [&](Value value) { return value == iv || varying.contains(value); };
  auto alongIv = [&](Value memref, ValueRange indices) {
    return !indices.empty() && indices.back() == iv &&
           llvm::none_of(indices.drop_back(), depends) && alignedRuns(memref);
  };
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return false;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (llvm::none_of(load.getIndices(), depends))
        continue;
      if (!alongIv(load.getMemRef(), load.getIndices()))
        return false;
      varying.insert(load.getResult());
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (store.getValueToStore() == iv || !alongIv(store.getMemRef(), store.getIndices()))
        return false;
      continue;
    }
    if (llvm::none_of(op.getOperands(), depends))
      continue;
    if (llvm::is_contained(op.getOperands(), iv) || op.getNumResults() != 1 ||
        !OpTrait::hasElementwiseMappableTraits(&op) || !isMemoryEffectFree(&op) ||
        !op.getResult(0).getType().isIntOrFloat())
      return false;
    varying.insert(op.getResult(0));
  }
  return true;
}

struct MapParallelLoops : impl::MapParallelLoopsBase<MapParallelLoops> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops(getOperation().front().getOps<scf::ParallelOp>());
    for (scf::ParallelOp loop : loops)
      if (failed(map(loop)))
        return signalPassFailure();
  }

  LogicalResult map(scf::ParallelOp loop) {
    if (loop.getNumResults() != 0)
      return loop.emitError("a parallel loop with reductions cannot become a GPU kernel");
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    auto constant = [&](int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); };
    // Each loop's lower bound and step are constants; its upper bound may
    // be a size the run gives, whose trip count and the grid over them are
    // then computed before the launch (the runtime evaluates them).
    SmallVector<int64_t> lower, steps;
    SmallVector<OpFoldResult> trips;
    for (auto [lb, ub, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> l = getConstantIntValue(lb), s = getConstantIntValue(step);
      if (!l || !s || *s <= 0)
        return loop.emitError("a parallel loop whose lower bound or step is not a positive "
                              "constant cannot become a GPU kernel");
      lower.push_back(*l);
      steps.push_back(*s);
      if (std::optional<int64_t> u = getConstantIntValue(ub)) {
        trips.push_back(b.getIndexAttr(*u > *l ? llvm::divideCeil(*u - *l, *s) : 0));
        continue;
      }
      // A run's size is never below the loop's lower bound (the importer
      // keeps every dimension positive), so the trip count is not negative.
      Value extent = arith::SubIOp::create(b, loc, ub, constant(*l));
      trips.push_back(arith::CeilDivUIOp::create(b, loc, extent, constant(*s)).getResult());
    }
    auto staticTrip = [](OpFoldResult trip) { return getConstantIntValue(trip); };
    bool isStatic = llvm::all_of(trips, [&](OpFoldResult trip) { return bool(staticTrip(trip)); });
    int64_t staticTotal = 1;
    for (OpFoldResult trip : trips)
      if (std::optional<int64_t> size = staticTrip(trip))
        staticTotal *= *size;
    if (staticTotal == 0) {
      loop.erase();
      return success();
    }
    // Each thread takes kVector neighbours along the innermost loop where
    // it can (16-byte loads and stores), else one iteration.
    llvm::DenseSet<Value> varying;
    bool fromZero = lower.back() == 0 && steps.back() == 1;
    std::optional<int64_t> innermost = staticTrip(trips.back());
    int64_t width = fromZero && innermost && vectorizable(loop, *innermost, varying) ? kVector : 1;
    if (width != 1) {
      trips.back() = b.getIndexAttr(*innermost / width);
      steps.back() = width;
      staticTotal /= width;
    }
    auto value = [&](OpFoldResult size) -> Value {
      if (std::optional<int64_t> known = staticTrip(size))
        return constant(*known);
      return cast<Value>(size);
    };
    Value total = constant(staticTotal);
    for (OpFoldResult trip : trips)
      if (!staticTrip(trip))
        total = arith::MulIOp::create(b, loc, total, value(trip));
    int64_t threads = isStatic ? std::min(staticTotal, kThreadsPerBlock) : kThreadsPerBlock;
    Value blocks = isStatic
                       ? constant(llvm::divideCeil(staticTotal, threads))
                       : arith::CeilDivUIOp::create(b, loc, total, constant(threads)).getResult();
    Value one = constant(1);
    auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, constant(threads), one, one);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value id = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, constant(threads)),
        launch.getThreadIds().x);
    // The last block's threads past the end do nothing.
    if (!isStatic || staticTotal % threads != 0) {
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, total);
      auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      gpu::TerminatorOp::create(b, loc);
      b.setInsertionPointToStart(guard.thenBlock());
    } else {
      gpu::TerminatorOp::create(b, loc);
      b.setInsertionPoint(launch.getBody().front().getTerminator());
    }
    // The innermost loop varies fastest across threads, so neighbouring
    // threads touch neighbouring elements.
    IRMapping mapping;
    Value rest = id;
    for (int64_t d = int64_t(trips.size()) - 1; d >= 0; --d) {
      Value trip = value(trips[d]);
      Value index = arith::RemUIOp::create(b, loc, rest, trip);
      rest = arith::DivUIOp::create(b, loc, rest, trip);
      Value iv = arith::AddIOp::create(b, loc, constant(lower[d]),
                                       arith::MulIOp::create(b, loc, index, constant(steps[d])));
      mapping.map(loop.getInductionVars()[d], iv);
    }
    if (width == 1) {
      for (Operation &op : loop.getBody()->without_terminator())
        b.clone(op, mapping);
    } else {
      vectorize(b, loop, varying, mapping);
    }
    loop.erase();
    return success();
  }

  /// `loop`'s body for kVector neighbours at once: the values in `varying`
  /// become vectors (loads and stores of 16 aligned bytes, elementwise ops
  /// on vectors), the others stay scalars, broadcast where a vector op
  /// reads them.
  void vectorize(OpBuilder &b, scf::ParallelOp loop, const llvm::DenseSet<Value> &varying,
                 IRMapping &scalars) {
    Location loc = loop.getLoc();
    llvm::DenseMap<Value, Value> vectors;
    auto vectorOf = [&](Value value) -> Value {
      if (Value vector = vectors.lookup(value))
        return vector;
      Value scalar = scalars.lookupOrDefault(value);
      Value vector =
          vector::BroadcastOp::create(b, loc, VectorType::get({kVector}, scalar.getType()), scalar);
      vectors[value] = vector;
      return vector;
    };
    auto indices = [&](ValueRange values) {
      SmallVector<Value> mapped;
      for (Value value : values)
        mapped.push_back(scalars.lookupOrDefault(value));
      return mapped;
    };
    llvm::Align aligned(kVector * 4);
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (auto load = dyn_cast<memref::LoadOp>(op); load && varying.contains(load.getResult())) {
        auto type = VectorType::get({kVector}, load.getType());
        vectors[load.getResult()] =
            vector::LoadOp::create(b, loc, type, scalars.lookupOrDefault(load.getMemRef()),
                                   indices(load.getIndices()), /*nontemporal=*/false, aligned);
      } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
        vector::StoreOp::create(b, loc, vectorOf(store.getValueToStore()),
                                scalars.lookupOrDefault(store.getMemRef()),
                                indices(store.getIndices()), /*nontemporal=*/false, aligned);
      } else if (op.getNumResults() == 1 && varying.contains(op.getResult(0))) {
        OperationState state(op.getLoc(), op.getName());
        for (Value operand : op.getOperands())
          state.addOperands(vectorOf(operand));
        state.addTypes(VectorType::get({kVector}, op.getResult(0).getType()));
        state.addAttributes(op.getAttrs());
        vectors[op.getResult(0)] = b.create(state)->getResult(0);
      } else {
        b.clone(op, scalars);
      }
    }
  }
};

} // namespace
} // namespace kiln
