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

bool isVectorizableOp(Operation &op) {
  if (!isa<arith::ConstantOp>(op) &&
      (!op.hasTrait<OpTrait::Elementwise>() || !isMemoryEffectFree(&op) || op.getNumRegions() != 0))
    return false;
  auto scalar = [](Type type) { return type.isF32() || type.isInteger(1) || type.isInteger(32); };
  return llvm::all_of(op.getResultTypes(), scalar) && llvm::all_of(op.getOperandTypes(), scalar);
}

bool isVectorizableBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  return body.getArguments().back().use_empty() &&
         llvm::all_of(body.without_terminator(), isVectorizableOp);
}

void cloneOnVectors(OpBuilder &b, Location loc, ArrayRef<Operation *> ops, IRMapping &mapping,
                    int64_t width) {
  auto vectorOf = [&](Type type) { return VectorType::get({width}, type); };
  for (Operation *op : ops) {
    Operation &inner = *op;
    if (llvm::all_of(inner.getResults(), [&](Value result) { return mapping.contains(result); }))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
      mapping.map(constant.getResult(),
                  splat(b, loc, vectorOf(constant.getType()), constant.getValue()));
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

Value splat(OpBuilder &b, Location loc, VectorType type, Attribute value) {
  return arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, value));
}

Value loadLanes(OpBuilder &b, Location loc, VectorType type, Value memref, ValueRange indices,
                Value mask) {
  if (!mask)
    return vector::LoadOp::create(b, loc, type, memref, indices);
  Value zeros = splat(b, loc, type, b.getZeroAttr(type.getElementType()));
  return vector::MaskedLoadOp::create(b, loc, type, memref, indices, mask, zeros);
}

} // namespace kiln::host
