// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Buffers.cpp - buffers, their views and the kernels that touch them -===//

#include "codegen/common/Buffers.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallBitVector.h"

namespace kiln {

using namespace mlir;

bool isReshape(Operation *op) { return isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(op); }

memref::AllocOp reshapedAlloc(Value value) {
  while (Operation *definition = value.getDefiningOp()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(definition))
      return alloc.getType().getLayout().isIdentity() ? alloc : memref::AllocOp();
    if (!isReshape(definition))
      return {};
    value = definition->getOperand(0);
  }
  return {};
}

Value rootOf(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

SmallVector<Operation *> accessesOf(Value root) {
  SmallVector<Operation *> result;
  SmallVector<Value> worklist = {root};
  Block *block = root.getParentBlock();
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      Operation *access = block->findAncestorOpInBlock(*user);
      if (view && view.getViewSource() == current)
        llvm::append_range(worklist, user->getResults());
      else if (access && !llvm::is_contained(result, access))
        result.push_back(access);
    }
  }
  return result;
}

bool isInert(Operation *op) { return isMemoryEffectFree(op) || isa<memref::AllocOp>(op); }

bool isMultiplyAdd(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || yield.getValues().size() != 1 || yield.getValues()[0] != add)
    return false;
  Value in0 = body.getArgument(0), in1 = body.getArgument(1), out = body.getArgument(2);
  bool product =
      (mul.getLhs() == in0 && mul.getRhs() == in1) || (mul.getLhs() == in1 && mul.getRhs() == in0);
  bool sum =
      (add.getLhs() == out && add.getRhs() == mul) || (add.getLhs() == mul && add.getRhs() == out);
  return product && sum;
}

bool onlyDimsAndConstants(AffineMap map) {
  return llvm::all_of(map.getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr, AffineConstantExpr>(e); });
}

bool isAllParallel(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops();
}

void eraseIfDead(Value root) {
  SmallVector<Operation *> views;
  SmallVector<Value> worklist = {root};
  while (!worklist.empty())
    for (Operation *user : worklist.pop_back_val().getUsers()) {
      if (!isa<ViewLikeOpInterface>(user) || !isMemoryEffectFree(user))
        return;
      views.push_back(user);
      llvm::append_range(worklist, user->getResults());
    }
  for (Operation *view : llvm::reverse(views))
    view->erase();
  root.getDefiningOp()->erase();
}

bool hasUnitInnermostStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 && succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat, ArrayRef<int64_t> extents) {
  return delinearize(b, loc, flat, getAsIndexOpFoldResult(b.getContext(), extents));
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<OpFoldResult> extents) {
  auto lanes = dyn_cast<VectorType>(flat.getType());
  auto valueOf = [&](OpFoldResult extent) -> Value {
    std::optional<int64_t> value = getConstantIntValue(extent);
    if (!value)
      return cast<Value>(extent);
    if (!lanes)
      return arith::ConstantIndexOp::create(b, loc, *value);
    return arith::ConstantOp::create(
        b, loc, lanes,
        DenseElementsAttr::get(lanes, b.getIntegerAttr(lanes.getElementType(), *value)));
  };
  auto isOne = [](OpFoldResult extent) { return isConstantIntValue(extent, 1); };
  SmallVector<Value> indices(extents.size());
  for (int64_t i = int64_t(extents.size()) - 1; i >= 0; --i) {
    if (isOne(extents[i])) {
      indices[i] = arith::ConstantIndexOp::create(b, loc, 0);
      continue;
    }
    // The outermost (non-unit) index is what remains.
    if (llvm::all_of(extents.take_front(i), isOne)) {
      indices[i] = flat;
      continue;
    }
    Value extent = valueOf(extents[i]);
    indices[i] = arith::RemUIOp::create(b, loc, flat, extent);
    flat = arith::DivUIOp::create(b, loc, flat, extent);
  }
  return indices;
}

OpFoldResult multiplied(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> factors) {
  int64_t known = 1;
  Value given;
  for (OpFoldResult factor : factors) {
    if (std::optional<int64_t> value = getConstantIntValue(factor)) {
      known *= *value;
      continue;
    }
    given = given ? arith::MulIOp::create(b, loc, given, cast<Value>(factor)).getResult()
                  : cast<Value>(factor);
  }
  if (!given)
    return b.getIndexAttr(known);
  if (known == 1)
    return given;
  return arith::MulIOp::create(b, loc, given, arith::ConstantIndexOp::create(b, loc, known))
      .getResult();
}

OpFoldResult bufferSize(OpBuilder &b, Location loc, Value buffer, int64_t dim) {
  auto type = cast<MemRefType>(buffer.getType());
  if (!type.isDynamicDim(dim))
    return b.getIndexAttr(type.getDimSize(dim));
  Operation *definition = buffer.getDefiningOp();
  if (auto alloc = dyn_cast_or_null<memref::AllocOp>(definition))
    return alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)];
  if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(definition))
    return expand.getMixedOutputShape()[dim];
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(definition)) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t from : collapse.getReassociationIndices()[dim])
      sizes.push_back(bufferSize(b, loc, collapse.getSrc(), from));
    return multiplied(b, loc, sizes);
  }
  if (auto cast = dyn_cast_or_null<memref::CastOp>(definition))
    return bufferSize(b, loc, cast.getSource(), dim);
  if (auto subview = dyn_cast_or_null<memref::SubViewOp>(definition)) {
    llvm::SmallBitVector dropped = subview.getDroppedDims();
    for (auto [d, size] : llvm::enumerate(subview.getMixedSizes()))
      if (!dropped.test(d) && dim-- == 0)
        return size;
  }
  return memref::DimOp::create(b, loc, buffer, dim).getResult();
}

SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map, ValueRange loops) {
  SmallVector<Value> indices;
  for (AffineExpr result : map.getResults())
    indices.push_back(
        isa<AffineDimExpr>(result)
            ? loops[cast<AffineDimExpr>(result).getPosition()]
            : arith::ConstantIndexOp::create(b, loc, cast<AffineConstantExpr>(result).getValue()));
  return indices;
}

} // namespace kiln
