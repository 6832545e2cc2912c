// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- VectorizeElementwise.cpp - elementwise kernels on vectors ----------===//
//
// An elementwise kernel (a bias, a residual Add, an activation, Softmax's
// normalization, a broadcast) left as a linalg.generic becomes scalar loops,
// which LLVM's loop vectorizer mostly leaves alone (it cannot prove the
// buffers apart). Here each such kernel becomes loops over its outer
// dimensions around a loop of vectors along its innermost one, a masked
// vector for the rest: operands that run along the innermost dimension are
// vector loads, those that do not are one scalar broadcast per row, and the
// body runs on vectors lane by lane.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/host/Passes.h"
#include "codegen/host/VectorBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {

#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;
using host::cloneBodyOnVectors;
using host::isVectorizableBody;

/// Whether `op` is an all-parallel f32 generic on buffers whose body runs
/// on vectors, whose operands run along its innermost loop or not at all,
/// with at least `minimum` iterations along it (or as many as a run gives).
bool isVectorizable(linalg::GenericOp op, int64_t minimum) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !isAllParallel(op) ||
      op.getNumLoops() == 0 || !isVectorizableBody(op) || !host::hasLaneOperands(op))
    return false;
  int64_t innermost = op.getStaticLoopRanges().back();
  return ShapedType::isDynamic(innermost) || innermost >= minimum;
}

/// `op` at its place: loops over its outer dimensions around vectors along
/// its innermost one.
void emitOnVectors(linalg::GenericOp op, int64_t width) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = VectorType::get({width}, b.getF32Type());
  unsigned innermost = op.getNumLoops() - 1;
  Block &body = op.getRegion().front();
  // The loops' extents: sizes, or those of the operands a run gives.
  SmallVector<OpFoldResult> ranges =
      llvm::map_to_vector(cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc),
                          [](const Range &range) { return range.size; });
  host::forEachVector(b, loc, ranges, width, [&](ArrayRef<Value> at, Value mask, int64_t) {
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      SmallVector<Value> where = indicesAt(b, loc, map, at);
      Value value;
      if (!map.isFunctionOfDim(innermost)) {
        value = vector::BroadcastOp::create(b, loc, type,
                                            memref::LoadOp::create(b, loc, input->get(), where));
      } else {
        value = host::loadLanes(b, loc, type, input->get(), where, mask);
      }
      mapping.map(body.getArgument(input->getOperandNumber()), value);
    }
    Value result = cloneBodyOnVectors(b, loc, body, mapping, width)[0];
    host::storeLanes(b, loc, result, op.getDpsInits()[0],
                     indicesAt(b, loc, op.getIndexingMapsArray().back(), at), mask);
  });
}

struct VectorizeElementwise : impl::VectorizeElementwiseBase<VectorizeElementwise> {
  using VectorizeElementwiseBase::VectorizeElementwiseBase;

  void runOnOperation() override {
    FailureOr<int64_t> lanes =
        host::vectorLanes(getOperation(), "kiln-vectorize-elementwise", vectorBits);
    if (failed(lanes))
      return signalPassFailure();
    int64_t width = *lanes;
    SmallVector<linalg::GenericOp> kernels;
    // Rows shorter than half a vector stay scalar.
    getOperation().walk([&](linalg::GenericOp op) {
      if (isVectorizable(op, width / 2))
        kernels.push_back(op);
    });
    for (linalg::GenericOp op : kernels) {
      emitOnVectors(op, width);
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
