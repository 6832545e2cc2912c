// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- VectorizeContractions.cpp - register-tiled matrix products ---------===//
//
// Every contraction the kernel generators emit (Conv over im2col columns,
// Gemm, MatMul) reads
//
//   C[.., m, n] += A[.. m .. k ..] * B[.. k .., n]
//
// with one reduction dimension k, a dimension n innermost in both C and B,
// and a dimension m of C and A. Here each such f32 linalg.generic on buffers
// becomes loops over register tiles of `rows` rows by two vectors of
// columns: a tile's accumulators stay in vector registers for the whole
// reduction, each step loading two vectors of B, broadcasting `rows` scalars
// of A and issuing 2 x rows FMAs. Tiles at the edges are the same code with
// fewer rows and masked columns.
//
// The kernels around a product join it, so that it is one kernel, one pass
// over memory (see `Fusion`):
//   - a zero fill of C before it: the accumulators start at zero;
//   - the elementwise kernel right after it that reads C (bias, activation,
//     residual): applied to the accumulators in registers, and C is never
//     stored;
//   - the kernel that computes B (the im2col gather of a convolution, with
//     its padding): each task computes the panel of B its columns read into
//     a buffer on its stack, and B is never stored.
// This runs on buffers before memory is planned, so that the buffers the
// fusions make dead take no memory.
//
// The work is split into tasks, one per column tile and index of the other
// dimensions (batch, groups); each task runs every row tile of its columns,
// so the panel of B it reads stays in cache, or a block of them where there
// would be too few tasks to keep threads evenly busy. Where B's rows are
// few, a task takes several column tiles, each row tile running over them. Tasks write disjoint
// parts of C: they form an scf.forall, which kiln-outline-parallel hands to
// the runtime's threads, when the product is big enough to be worth it.
//
// Where A is packed in groups of rows (kiln-pack-weights), the few columns
// past a tile's last whole vector are summed across its rows instead: a
// vector of A's group times each column's element of B.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/host/ContractionFusion.h"
#include "codegen/host/Passes.h"
#include "codegen/host/RegisterTiles.h"
#include "codegen/host/VectorBody.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {

#define GEN_PASS_DEF_VECTORIZECONTRACTIONS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;
using namespace host;

struct VectorizeContractions : impl::VectorizeContractionsBase<VectorizeContractions> {
  using VectorizeContractionsBase::VectorizeContractionsBase;

  void runOnOperation() override {
    FailureOr<int64_t> lanes =
        vectorLanes(getOperation(), "kiln-vectorize-contractions", vectorBits);
    if (failed(lanes))
      return signalPassFailure();
    int64_t width = *lanes;
    // Two vectors of columns per row; the rows fill the vector registers
    // (16 below AVX-512, 32 with it) less the two B vectors and a broadcast.
    int64_t rows = vectorBits == 512 ? 12 : 6;
    SmallVector<std::pair<linalg::GenericOp, Roles>> work;
    // Below this many multiply-adds (some microseconds), handing tasks to
    // threads costs more than it saves.
    constexpr int64_t kParallelWork = 1 << 16;
    getOperation().walk([&](linalg::GenericOp op) {
      // A tile's columns must lie in one panel of a packed B, its rows in
      // one group of a packed A.
      if (std::optional<Roles> roles = contractionRoles(op);
          roles && roles->panel % (2 * width) == 0 && roles->rowGroup % rows == 0)
        work.emplace_back(op, *roles);
    });
    for (auto &[op, roles] : work) {
      // A product of run-time rows or batch splits into tasks as a big one
      // does: a run of few rows has few tasks.
      int64_t multiplyAdds = 1;
      for (int64_t extent : op.getStaticLoopRanges())
        multiplyAdds = ShapedType::isDynamic(extent)
                           ? kParallelWork
                           : std::min(multiplyAdds * extent, kParallelWork);
      Fusion fusion;
      if (fuse) {
        fusion.zeroFill = zeroFillOf(op);
        findEpilogue(op, roles, fusion);
        findProducer(op, roles, width, fusion);
      }
      // A product inside a task (of kiln-fuse-rows) runs on its thread.
      bool parallel = multiplyAdds >= kParallelWork && !op->getParentOfType<scf::ForallOp>();
      emitRegisterTiles(op, roles, fusion, width, rows, parallel);

      Value c = rootOf(op.getDpsInits()[0]), b = rootOf(op.getDpsInputs()[1]);
      op.erase();
      for (Operation *joined : {fusion.zeroFill.getOperation(), fusion.epilogue.getOperation(),
                                fusion.producer.getOperation()})
        if (joined)
          joined->erase();
      if (fusion.epilogue)
        eraseIfDead(c);
      if (fusion.producer)
        eraseIfDead(b);
    }
  }
};

} // namespace
} // namespace kiln
