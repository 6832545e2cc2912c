//===- MapParallelLoops.cpp - parallel loops onto blocks of threads -------===//

#include "passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {

#define GEN_PASS_DEF_MAPPARALLELLOOPS
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

constexpr int64_t kThreadsPerBlock = 256;

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
    SmallVector<int64_t> lower, trips, steps;
    int64_t total = 1;
    for (auto [lb, ub, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (!l || !u || !s || *s <= 0)
        return loop.emitError("a parallel loop with bounds that are not constant cannot "
                              "become a GPU kernel");
      lower.push_back(*l);
      steps.push_back(*s);
      trips.push_back(*u > *l ? llvm::divideCeil(*u - *l, *s) : 0);
      total *= trips.back();
    }
    if (total == 0) {
      loop.erase();
      return success();
    }
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    auto constant = [&](int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); };
    int64_t threads = std::min(total, kThreadsPerBlock);
    Value one = constant(1);
    auto launch = gpu::LaunchOp::create(b, loc, constant(llvm::divideCeil(total, threads)), one,
                                        one, constant(threads), one, one);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value id = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, constant(threads)),
        launch.getThreadIds().x);
    // The last block's threads past the end do nothing.
    if (total % threads != 0) {
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, constant(total));
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
      Value index = arith::RemUIOp::create(b, loc, rest, constant(trips[d]));
      rest = arith::DivUIOp::create(b, loc, rest, constant(trips[d]));
      Value iv = arith::AddIOp::create(
          b, loc, constant(lower[d]), arith::MulIOp::create(b, loc, index, constant(steps[d])));
      mapping.map(loop.getInductionVars()[d], iv);
    }
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    loop.erase();
    return success();
  }
};

} // namespace
} // namespace kiln
