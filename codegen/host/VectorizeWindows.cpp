// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- VectorizeWindows.cpp - window kernels on vector lanes --------------===//
//
// A kernel that loops over a window for each output (a depthwise
// convolution, max or average pooling) is an all-parallel generic whose
// body holds scf.for loops over the window and reads its input with
// memref.load at indices it computes, checking them against the input's
// bounds where the window overhangs it. Here its outputs run a vector of
// lanes at a time along the innermost dimension, the window loops carrying
// vectors (LaneEmitter.h): reads along the lanes are vector loads, values
// the same in every lane stay scalars, and bounds checks that differ by
// lane are versioned on the first and the last lane.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/host/LaneEmitter.h"
#include "codegen/host/Passes.h"
#include "codegen/host/VectorBody.h"

#include "llvm/Support/MathExtras.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {

#define GEN_PASS_DEF_VECTORIZEWINDOWS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// The lanes `op` runs on: a vector register's, or fewer (a power of two)
/// for a shorter innermost dimension; 0 when it is no window kernel this
/// pass handles or vectors do not pay (fewer than 4 iterations along the
/// innermost dimension, reads that do not run along the lanes).
int64_t windowLanes(linalg::GenericOp op, int64_t width) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !isAllParallel(op) ||
      op.getNumLoops() == 0 || !host::hasLaneOperands(op) ||
      op.getRegion().front().getOps<scf::ForOp>().empty())
    return 0;
  // An innermost extent a run gives takes a whole register (its rest
  // masked).
  int64_t extent = op.getStaticLoopRanges().back();
  if (!ShapedType::isDynamic(extent) && extent < 4)
    return 0;
  host::LaneDependence varies(op);
  int64_t lanes =
      ShapedType::isDynamic(extent) ? width : std::min<int64_t>(width, llvm::PowerOf2Ceil(extent));
  if (!host::hasLaneBody(op, varies) || !host::readsAlongLanes(op, lanes, varies))
    return 0;
  return lanes;
}

struct VectorizeWindows : impl::VectorizeWindowsBase<VectorizeWindows> {
  using VectorizeWindowsBase::VectorizeWindowsBase;

  void runOnOperation() override {
    FailureOr<int64_t> width =
        host::vectorLanes(getOperation(), "kiln-vectorize-windows", vectorBits);
    if (failed(width))
      return signalPassFailure();
    SmallVector<std::pair<linalg::GenericOp, int64_t>> kernels;
    getOperation().walk([&](linalg::GenericOp op) {
      if (int64_t lanes = windowLanes(op, *width))
        kernels.push_back({op, lanes});
    });
    for (auto [op, lanes] : kernels) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      host::LaneDependence varies(op);
      SmallVector<OpFoldResult> extents =
          llvm::map_to_vector(cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc),
                              [](const Range &range) { return range.size; });
      host::forEachVector(b, loc, extents, lanes, [&](ArrayRef<Value> at, Value mask, int64_t n) {
        // A run's rest: the lanes from the last vector's first to the end.
        Value active =
            ShapedType::isDynamic(n)
                ? arith::SubIOp::create(
                      b, loc, getValueOrCreateConstantIndexOp(b, loc, extents.back()), at.back())
                      .getResult()
                : arith::ConstantIndexOp::create(b, loc, n).getResult();
        Value result = host::emitOnLanes(op, lanes, b, varies, at, mask, active);
        host::storeLanes(b, loc, result, op.getDpsInits()[0],
                         indicesAt(b, loc, op.getIndexingMapsArray().back(), at), mask);
      });
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
