// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- VectorizeRowLoops.cpp - reductions along a row, on vectors ---------===//
//
// Row statistics (Softmax's maximum and sum of exponentials, LayerNorm's
// mean and variance) are kernels whose body loops over a row:
//
//   %r = scf.for %k = 0 to N step 1 iter_args(%acc = %init) -> f32 {
//     %x = memref.load %row[..., %k]      (unit stride along k)
//     ...elementwise arith and math...
//     scf.yield (%acc combined with the value: addf, maximumf, ...)
//   }
//
// LLVM keeps such a loop scalar: a floating-point sum is not reassociable.
// Here it runs on vectors: lanes accumulate separately from the identity,
// a masked vector takes the rest of the row, and the lanes combine at the
// end with the initial value. Sums are then added in another order, as
// every vectorized reduction (onnxruntime's among them) adds them.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/host/Passes.h"
#include "codegen/host/VectorBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace kiln {

#define GEN_PASS_DEF_VECTORIZEROWLOOPS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// How the loop combines its accumulator: the vector reduction's kind and
/// the identity the lanes start from.
std::optional<std::pair<vector::CombiningKind, float>> combining(Operation *op) {
  constexpr float infinity = std::numeric_limits<float>::infinity();
  if (isa<arith::AddFOp>(op))
    return std::pair{vector::CombiningKind::ADD, 0.0f};
  if (isa<arith::MaximumFOp>(op))
    return std::pair{vector::CombiningKind::MAXIMUMF, -infinity};
  if (isa<arith::MaxNumFOp>(op))
    return std::pair{vector::CombiningKind::MAXNUMF, -infinity};
  if (isa<arith::MinimumFOp>(op))
    return std::pair{vector::CombiningKind::MINIMUMF, infinity};
  if (isa<arith::MinNumFOp>(op))
    return std::pair{vector::CombiningKind::MINNUMF, infinity};
  return std::nullopt;
}

/// A row loop this pass vectorizes: its trip count (ShapedType::kDynamic
/// for a row whose length a run gives) and its combining op.
struct RowLoop {
  int64_t extent;
  Operation *combine;
};

std::optional<RowLoop> rowLoop(scf::ForOp loop, int64_t minimum) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !step || *lower != 0 || *step != 1 || (upper && *upper < minimum) ||
      loop.getNumRegionIterArgs() != 1 || !loop.getRegionIterArgs()[0].getType().isF32())
    return std::nullopt;
  Value accumulator = loop.getRegionIterArgs()[0];
  Operation *combine = loop.getBody()->getTerminator()->getOperand(0).getDefiningOp();
  // The accumulator and the combination each have one use: the
  // combination, and the loop's yield.
  if (!combine || !combining(combine) || !accumulator.hasOneUse() ||
      *accumulator.getUsers().begin() != combine || combine->getBlock() != loop.getBody() ||
      !combine->getResult(0).hasOneUse())
    return std::nullopt;
  Value iv = loop.getInductionVar();
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (&op == combine)
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      ValueRange indices = load.getIndices();
      if (indices.empty() || indices.back() != iv || !load.getType().isF32() ||
          !hasUnitInnermostStride(load.getMemRefType()) ||
          llvm::any_of(indices.drop_back(), [&](Value index) {
            return index == iv || loop->isAncestor(index.getParentBlock()->getParentOp());
          }))
        return std::nullopt;
      continue;
    }
    if (!host::isVectorizableOp(op) || llvm::is_contained(op.getOperands(), iv))
      return std::nullopt;
  }
  return RowLoop{upper.value_or(ShapedType::kDynamic), combine};
}

class RowLoopEmitter {
public:
  RowLoopEmitter(scf::ForOp loop, RowLoop row, int64_t width)
      : loop(loop), row(row), width(width), b(loop), loc(loop.getLoc()) {}

  void emit() {
    auto [kind, identity] = *combining(row.combine);
    VectorType type = vectorOf(b.getF32Type());
    Value start = host::splat(b, loc, type, b.getF32FloatAttr(identity));
    Value lanes = start;
    auto vectorsTo = [&](Value whole) {
      auto vectors = scf::ForOp::create(
          b, loc, index(0), whole, index(width), ValueRange{start},
          [&](OpBuilder &nested, Location, Value k, ValueRange accumulators) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
            scf::YieldOp::create(b, loc, step(k, accumulators[0], Value(), Value()));
          });
      lanes = vectors.getResult(0);
    };
    if (ShapedType::isDynamic(row.extent)) {
      // A run's row: its whole vectors, then a masked one (of no lanes
      // when the row has no rest).
      Value extent = loop.getUpperBound();
      Value whole = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, extent, index(width)), index(width));
      vectorsTo(whole);
      Value rest = arith::SubIOp::create(b, loc, extent, whole);
      Value mask = vector::CreateMaskOp::create(b, loc, vectorOf(b.getI1Type()), ValueRange{rest});
      lanes = step(whole, lanes, mask, start);
    } else {
      int64_t whole = row.extent / width * width;
      if (whole > 0)
        vectorsTo(index(whole));
      if (row.extent > whole) {
        Value mask = vector::ConstantMaskOp::create(b, loc, vectorOf(b.getI1Type()),
                                                    ArrayRef<int64_t>{row.extent - whole});
        lanes = step(index(whole), lanes, mask, start);
      }
    }
    Value reduced = vector::ReductionOp::create(b, loc, kind, lanes);
    // The loop's initial value, combined as the loop would.
    IRMapping mapping;
    mapping.map(loop.getRegionIterArgs()[0], loop.getInitArgs()[0]);
    Value other = row.combine->getOperand(0) == loop.getRegionIterArgs()[0]
                      ? row.combine->getOperand(1)
                      : row.combine->getOperand(0);
    mapping.map(other, reduced);
    Value result = b.clone(*row.combine, mapping)->getResult(0);
    loop.getResult(0).replaceAllUsesWith(result);
    loop.erase();
  }

private:
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }
  VectorType vectorOf(Type type) { return VectorType::get({width}, type); }

  /// The loop body on the lanes from `k`, combined into `accumulator`; with
  /// `mask`, lanes off it contribute `identity`.
  Value step(Value k, Value accumulator, Value mask, Value identity) {
    IRMapping mapping;
    mapping.map(loop.getRegionIterArgs()[0], accumulator);
    SmallVector<Operation *> ops;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (&op == row.combine)
        continue;
      ops.push_back(&op);
      auto load = dyn_cast<memref::LoadOp>(op);
      if (!load)
        continue;
      SmallVector<Value> indices(load.getIndices().drop_back());
      indices.push_back(k);
      mapping.map(load.getResult(), host::loadLanes(b, loc, vectorOf(load.getType()),
                                                    load.getMemRef(), indices, mask));
    }
    host::cloneOnVectors(b, loc, ops, mapping, width);
    Value accumulated = loop.getRegionIterArgs()[0];
    Value value = row.combine->getOperand(0) == accumulated ? row.combine->getOperand(1)
                                                            : row.combine->getOperand(0);
    if (!mapping.contains(value))
      mapping.map(value, vector::BroadcastOp::create(b, loc, vectorOf(value.getType()), value));
    if (mask)
      mapping.map(value, arith::SelectOp::create(b, loc, mask, mapping.lookup(value), identity));
    Operation *combined = b.clone(*row.combine, mapping);
    combined->getResult(0).setType(accumulator.getType());
    return combined->getResult(0);
  }

  scf::ForOp loop;
  RowLoop row;
  int64_t width;
  OpBuilder b;
  Location loc;
};

struct VectorizeRowLoops : impl::VectorizeRowLoopsBase<VectorizeRowLoops> {
  using VectorizeRowLoopsBase::VectorizeRowLoopsBase;

  void runOnOperation() override {
    FailureOr<int64_t> lanes =
        host::vectorLanes(getOperation(), "kiln-vectorize-row-loops", vectorBits);
    if (failed(lanes))
      return signalPassFailure();
    int64_t width = *lanes;
    SmallVector<std::pair<scf::ForOp, RowLoop>> loops;
    // A row shorter than a vector stays scalar.
    getOperation().walk([&](scf::ForOp loop) {
      if (std::optional<RowLoop> row = rowLoop(loop, width))
        loops.push_back({loop, *row});
    });
    for (auto [loop, row] : loops)
      RowLoopEmitter(loop, row, width).emit();
  }
};

} // namespace
} // namespace kiln
