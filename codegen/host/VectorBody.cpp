//===- VectorBody.cpp - a linalg body computed on vectors -----------------===//

#include "codegen/host/VectorBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::host {

FailureOr<int64_t> vectorLanes(Operation *op, StringRef pass, int64_t bits) {
  if (bits != 128 && bits != 256 && bits != 512)
    return op->emitError(pass) << ": vector-bits must be 128, 256 or 512, not " << bits;
  return bits / 32;
}

bool isVectorizableBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return false;
  for (Operation &inner : body.without_terminator()) {
    bool constant = isa<arith::ConstantOp>(inner);
    if (!constant && (!inner.hasTrait<OpTrait::Elementwise>() || !isMemoryEffectFree(&inner) ||
                      inner.getNumRegions() != 0))
      return false;
    auto scalar = [](Type type) { return type.isF32() || type.isInteger(1) || type.isInteger(32); };
    if (!llvm::all_of(inner.getResultTypes(), scalar) ||
        !llvm::all_of(inner.getOperandTypes(), scalar))
      return false;
  }
  return true;
}

void cloneOnVectors(OpBuilder &b, Location loc, ArrayRef<Operation *> ops, IRMapping &mapping,
                    int64_t width) {
  auto vectorOf = [&](Type type) { return VectorType::get({width}, type); };
  for (Operation *op : ops) {
    Operation &inner = *op;
    if (llvm::all_of(inner.getResults(), [&](Value result) { return mapping.contains(result); }))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
      auto type = vectorOf(constant.getType());
      mapping.map(constant.getResult(),
                  arith::ConstantOp::create(b, loc, type,
                                            DenseElementsAttr::get(type, constant.getValue())));
      continue;
    }
    // Values from outside the body are the same in every lane.
    for (Value operand : inner.getOperands())
      if (!mapping.contains(operand))
        mapping.map(operand,
                    vector::BroadcastOp::create(b, loc, vectorOf(operand.getType()), operand));
    Operation *vectorized = b.clone(inner, mapping);
    for (OpResult result : vectorized->getResults())
      result.setType(vectorOf(result.getType()));
  }
}

SmallVector<Value> cloneBodyOnVectors(OpBuilder &b, Location loc, Block &body, IRMapping &mapping,
                                      int64_t width) {
  SmallVector<Operation *> ops;
  for (Operation &inner : body.without_terminator())
    ops.push_back(&inner);
  cloneOnVectors(b, loc, ops, mapping, width);
  SmallVector<Value> results;
  for (Value yielded : body.getTerminator()->getOperands())
    results.push_back(mapping.lookup(yielded));
  return results;
}

SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map, ArrayRef<Value> at) {
  SmallVector<Value> result;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      result.push_back(at[dim.getPosition()]);
    else
      result.push_back(
          arith::ConstantIndexOp::create(b, loc, cast<AffineConstantExpr>(expr).getValue()));
  }
  return result;
}

} // namespace kiln::host
