// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- PrepareGpuLoops.cpp - linalg loops ready to become GPU kernels -----===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

#define GEN_PASS_DEF_PREPAREGPULOOPS
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

struct PrepareGpuLoops : impl::PrepareGpuLoopsBase<PrepareGpuLoops> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    for (Operation &op : getOperation().front())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
          linalgOp && linalgOp.hasPureBufferSemantics())
        ops.push_back(linalgOp);
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      // Parallel loops first, each kind in its order.
      if (generic && !llvm::is_sorted(iterators, [](utils::IteratorType l, utils::IteratorType r) {
            return l == utils::IteratorType::parallel && r != utils::IteratorType::parallel;
          })) {
        SmallVector<unsigned> order;
        for (auto kind : {utils::IteratorType::parallel, utils::IteratorType::reduction})
          for (auto [index, iterator] : llvm::enumerate(iterators))
            if (iterator == kind)
              order.push_back(unsigned(index));
        rewriter.setInsertionPoint(generic);
        if (succeeded(linalg::interchangeGenericOp(rewriter, generic, order)))
          continue;
      }
      if (op.getNumParallelLoops() > 0)
        continue;
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop =
          scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{one}, ValueRange{one});
      op->moveBefore(loop.getBody()->getTerminator());
    }
  }
};

} // namespace
} // namespace kiln
