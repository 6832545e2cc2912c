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

#include "codegen/host/Passes.h"
#include "codegen/host/VectorBody.h"
#include "passes/Buffers.h"

namespace kiln {

#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;
using host::cloneBodyOnVectors;
using host::isVectorizableBody;

/// Whether `op` is an all-parallel f32 generic on buffers whose output runs
/// along its innermost loop, each input either along it too or not at all,
/// with at least `minimum` iterations along it.
bool isVectorizable(linalg::GenericOp op, int64_t minimum) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !isAllParallel(op) ||
      op.getNumLoops() == 0 || !isVectorizableBody(op))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges.back() < minimum)
    return false;
  unsigned innermost = op.getNumLoops() - 1;
  AffineExpr last = getAffineDimExpr(innermost, op.getContext());
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape() ||
        !onlyDimsAndConstants(map))
      return false;
    bool along = map.isFunctionOfDim(innermost);
    if (op.isDpsInit(&operand) && !along)
      return false;
    if (along && (map.getResults().back() != last || !hasUnitInnermostStride(type)))
      return false;
  }
  return true;
}

class ElementwiseEmitter {
public:
  ElementwiseEmitter(linalg::GenericOp op, int64_t width)
      : op(op), width(width), b(op), loc(op.getLoc()), ranges(op.getStaticLoopRanges()),
        at(ranges.size()) {}

  void emit() { nest(0); }

private:
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  /// Loops over the outer dimensions from `dim`, then along the innermost.
  void nest(unsigned dim) {
    if (dim + 1 == ranges.size()) {
      innermost();
      return;
    }
    if (ranges[dim] == 1) {
      at[dim] = index(0);
      nest(dim + 1);
      return;
    }
    auto loop = scf::ForOp::create(b, loc, index(0), index(ranges[dim]), index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    at[dim] = loop.getInductionVar();
    nest(dim + 1);
  }

  /// Whole vectors, then a masked one for the rest.
  void innermost() {
    int64_t extent = ranges.back(), whole = extent / width * width;
    if (whole > 0) {
      auto loop = scf::ForOp::create(b, loc, index(0), index(whole), index(width));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      at.back() = loop.getInductionVar();
      vector(Value());
    }
    if (extent > whole) {
      at.back() = index(whole);
      vector(vector::ConstantMaskOp::create(b, loc, VectorType::get({width}, b.getI1Type()),
                                            ArrayRef<int64_t>{extent - whole}));
    }
  }

  SmallVector<Value> indices(AffineMap map) { return indicesAt(b, loc, map, at); }

  /// The body on the vector of lanes from the innermost index `at`.
  void vector(Value mask) {
    auto type = VectorType::get({width}, b.getF32Type());
    unsigned innermost = ranges.size() - 1;
    Block &body = op.getRegion().front();
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      SmallVector<Value> where = indices(map);
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
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> where = indices(op.getMatchingIndexingMap(init));
    if (mask)
      vector::MaskedStoreOp::create(b, loc, init->get(), where, mask, result);
    else
      vector::StoreOp::create(b, loc, result, init->get(), where);
  }

  linalg::GenericOp op;
  int64_t width;
  OpBuilder b;
  Location loc;
  SmallVector<int64_t> ranges;
  /// Each loop's index where code is being emitted.
  SmallVector<Value> at;
};

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
      ElementwiseEmitter(op, width).emit();
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
