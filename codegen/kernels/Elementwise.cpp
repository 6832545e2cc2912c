//===- Elementwise.cpp - elementwise ops as linalg.generic ----------------===//

#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;

namespace kiln {
namespace {

/// Computes one result element from the operands' elements.
using ScalarFn = function_ref<Value(OpBuilder &, Location, Type, ValueRange)>;

/// The indexing map that reads `operand` broadcast onto a result of `rank`:
/// missing leading dimensions and dimensions of size 1 read index 0.
AffineMap broadcastMap(RankedTensorType operand, RankedTensorType result,
                       MLIRContext *context) {
  int64_t offset = result.getRank() - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < operand.getRank(); ++d)
    exprs.push_back(operand.getDimSize(d) == result.getDimSize(d + offset)
                        ? getAffineDimExpr(d + offset, context)
                        : getAffineConstantExpr(0, context));
  return AffineMap::get(result.getRank(), 0, exprs, context);
}

/// Replaces `op` with a linalg.generic over its result shape.
void replaceWithGeneric(Operation *op, PatternRewriter &rewriter, ScalarFn fn) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  SmallVector<AffineMap> maps;
  for (Value operand : op->getOperands())
    maps.push_back(broadcastMap(cast<RankedTensorType>(operand.getType()), type, context));
  maps.push_back(rewriter.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, op->getOperands(), ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        Value result = fn(b, l, type.getElementType(), args.drop_back());
        linalg::YieldOp::create(b, l, result);
      });
  rewriter.replaceOp(op, generic.getResults());
}

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

template <typename OpT>
struct ElementwiseToLinalg : OpRewritePattern<OpT> {
  ElementwiseToLinalg(MLIRContext *context,
                      std::function<Value(OpT, OpBuilder &, Location, Type, ValueRange)> body)
      : OpRewritePattern<OpT>(context), body(std::move(body)) {}

  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    for (Type type : op->getOperandTypes())
      if (!isa<FloatType>(cast<RankedTensorType>(type).getElementType()))
        return rewriter.notifyMatchFailure(op, "only float elementwise ops have a kernel generator");
    replaceWithGeneric(op, rewriter, [&](OpBuilder &b, Location loc, Type t, ValueRange args) {
      return body(op, b, loc, t, args);
    });
    return success();
  }

  std::function<Value(OpT, OpBuilder &, Location, Type, ValueRange)> body;
};

/// A pattern whose body is one op of the arith or math dialect.
template <typename OpT, typename ScalarOpT>
void addSimple(RewritePatternSet &patterns) {
  patterns.add<ElementwiseToLinalg<OpT>>(
      patterns.getContext(), [](OpT, OpBuilder &b, Location loc, Type, ValueRange args) {
        return ScalarOpT::create(b, loc, args).getResult();
      });
}

template <typename OpT>
void addBody(RewritePatternSet &patterns,
             std::function<Value(OpT, OpBuilder &, Location, Type, ValueRange)> body) {
  patterns.add<ElementwiseToLinalg<OpT>>(patterns.getContext(), std::move(body));
}

} // namespace

void populateElementwiseKernels(RewritePatternSet &patterns) {
  addSimple<SqrtOp, math::SqrtOp>(patterns);
  addSimple<ExpOp, math::ExpOp>(patterns);
  addSimple<ErfOp, math::ErfOp>(patterns);
  addSimple<TanhOp, math::TanhOp>(patterns);

  addBody<ReluOp>(patterns, [](ReluOp, OpBuilder &b, Location loc, Type t, ValueRange args) {
    return arith::MaximumFOp::create(b, loc, args[0], floatConstant(b, loc, t, 0.0)).getResult();
  });
  addBody<SigmoidOp>(patterns, [](SigmoidOp, OpBuilder &b, Location loc, Type t, ValueRange args) {
    Value negated = arith::NegFOp::create(b, loc, args[0]);
    Value exp = math::ExpOp::create(b, loc, negated);
    Value one = floatConstant(b, loc, t, 1.0);
    return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, exp)).getResult();
  });
  addBody<LeakyReluOp>(patterns, [](LeakyReluOp op, OpBuilder &b, Location loc, Type t, ValueRange args) {
    Value scaled = arith::MulFOp::create(
        b, loc, args[0], floatConstant(b, loc, t, op.getAlpha().convertToDouble()));
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, args[0],
                                           floatConstant(b, loc, t, 0.0));
    return arith::SelectOp::create(b, loc, positive, args[0], scaled).getResult();
  });
  addBody<ClipOp>(patterns, [](ClipOp op, OpBuilder &b, Location loc, Type t, ValueRange args) {
    Value low = floatConstant(b, loc, t, op.getMin().convertToDouble());
    Value high = floatConstant(b, loc, t, op.getMax().convertToDouble());
    Value clamped = arith::MaximumFOp::create(b, loc, args[0], low);
    return arith::MinimumFOp::create(b, loc, clamped, high).getResult();
  });

  addSimple<AddOp, arith::AddFOp>(patterns);
  addSimple<SubOp, arith::SubFOp>(patterns);
  addSimple<MulOp, arith::MulFOp>(patterns);
  addSimple<DivOp, arith::DivFOp>(patterns);
}

} // namespace kiln
