// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- VectorBody.cpp - a linalg body computed on vectors -----------------===//

#include "codegen/host/VectorBody.h"

#include "dialects/kiln/KilnDialect.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

#include "codegen/common/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

bool hasLaneOperands(linalg::GenericOp op) {
  unsigned innermost = op.getNumLoops() - 1;
  AffineExpr last = getAffineDimExpr(innermost, op.getContext());
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !type.getElementType().isF32() || !onlyDimsAndConstants(map))
      return false;
    bool along = map.isFunctionOfDim(innermost);
    if (op.isDpsInit(&operand) && !along)
      return false;
    if (along && (map.getResults().back() != last || !hasUnitInnermostStride(type)))
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
  // A value from outside the body (a fill's) is the same in every lane.
  for (Value yielded : body.getTerminator()->getOperands())
    results.push_back(mapping.contains(yielded)
                          ? mapping.lookup(yielded)
                          : vector::BroadcastOp::create(
                                b, loc, VectorType::get({width}, yielded.getType()), yielded)
                                .getResult());
  return results;
}

void forEachVector(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> ranges, int64_t width,
                   function_ref<void(ArrayRef<Value>, Value, int64_t)> body) {
  SmallVector<Value> at(ranges.size());
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto value = [&](OpFoldResult size) { return getValueOrCreateConstantIndexOp(b, loc, size); };
  std::function<void(size_t)> nest = [&](size_t dim) {
    OpBuilder::InsertionGuard guard(b);
    if (dim + 1 < ranges.size()) {
      if (isConstantIntValue(ranges[dim], 1)) {
        at[dim] = index(0);
      } else {
        auto loop = scf::ForOp::create(b, loc, index(0), value(ranges[dim]), index(1));
        b.setInsertionPoint(loop.getBody()->getTerminator());
        at[dim] = loop.getInductionVar();
      }
      nest(dim + 1);
      return;
    }
    auto vectorsTo = [&](Value whole) {
      OpBuilder::InsertionGuard inner(b);
      auto loop = scf::ForOp::create(b, loc, index(0), whole, index(width));
      b.setInsertionPoint(loop.getBody()->getTerminator());
      at.back() = loop.getInductionVar();
      body(at, Value(), width);
    };
    std::optional<int64_t> constant = getConstantIntValue(ranges.back());
    if (!constant) {
      // A run's extent: its whole vectors, then a masked one (of no lanes
      // when there is no rest).
      Value extent = value(ranges.back());
      Value whole = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, extent, index(width)), index(width));
      vectorsTo(whole);
      at.back() = whole;
      Value rest = arith::SubIOp::create(b, loc, extent, whole);
      Value mask = vector::CreateMaskOp::create(b, loc, VectorType::get({width}, b.getI1Type()),
                                                ValueRange{rest});
      body(at, mask, ShapedType::kDynamic);
      return;
    }
    int64_t extent = *constant, whole = extent / width * width;
    if (whole > 0)
      vectorsTo(index(whole));
    if (extent > whole) {
      at.back() = index(whole);
      Value mask = vector::ConstantMaskOp::create(b, loc, VectorType::get({width}, b.getI1Type()),
                                                  ArrayRef<int64_t>{extent - whole});
      body(at, mask, extent - whole);
    }
  };
  nest(0);
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

Value gatherLanes(OpBuilder &b, Location loc, VectorType type, Value memref,
                  ArrayRef<Value> indices, Value mask) {
  auto memrefType = cast<MemRefType>(memref.getType());
  // Offsets into fewer than 2^31 elements, as a static shape shows, stay
  // 32-bit; into a buffer sized at run time they widen to 64 bits.
  bool narrow = memrefType.hasStaticShape() && memrefType.getNumElements() < (int64_t(1) << 31);
  auto offsetType = VectorType::get(type.getShape(), narrow ? b.getI32Type() : b.getI64Type());
  Value offsets;
  // The stride of dimension d: a constant while the dimensions after it
  // are static, else computed from the buffer's sizes.
  int64_t stride = 1;
  Value dynamicStride;
  for (int64_t d = memrefType.getRank() - 1; d >= 0; --d) {
    Value term = indices[d];
    if (!narrow)
      term = arith::ExtSIOp::create(b, loc, offsetType, term);
    if (dynamicStride) {
      Value scalar = arith::IndexCastOp::create(b, loc, offsetType.getElementType(), dynamicStride);
      term = arith::MulIOp::create(b, loc, term,
                                   vector::BroadcastOp::create(b, loc, offsetType, scalar));
    } else if (stride != 1) {
      term = arith::MulIOp::create(
          b, loc, term,
          splat(b, loc, offsetType, b.getIntegerAttr(offsetType.getElementType(), stride)));
    }
    offsets = offsets ? arith::AddIOp::create(b, loc, offsets, term).getResult() : term;
    if (!dynamicStride && !memrefType.isDynamicDim(d)) {
      stride *= memrefType.getDimSize(d);
      continue;
    }
    if (!dynamicStride)
      dynamicStride = arith::ConstantIndexOp::create(b, loc, stride);
    dynamicStride =
        arith::MulIOp::create(b, loc, dynamicStride, memref::DimOp::create(b, loc, memref, d));
  }
  SmallVector<ReassociationIndices> all = {
      llvm::to_vector(llvm::seq<int64_t>(0, memrefType.getRank()))};
  Value flat = memref::CollapseShapeOp::create(b, loc, memref, all);
  Value zeros = splat(b, loc, type, b.getZeroAttr(type.getElementType()));
  Value first = arith::ConstantIndexOp::create(b, loc, 0);
  return vector::GatherOp::create(b, loc, type, flat, ValueRange{first}, offsets, mask, zeros);
}

void storeLanes(OpBuilder &b, Location loc, Value value, Value memref, ValueRange indices,
                Value mask) {
  if (mask)
    vector::MaskedStoreOp::create(b, loc, memref, indices, mask, value);
  else
    vector::StoreOp::create(b, loc, value, memref, indices);
}

} // namespace kiln::host
