// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- TileContext.h - what a register-tiled product's emitters share -*- C++ -*-===//
//
// A host product is emitted as register tiles (RegisterTiles.cpp) over
// panels of B built per task (Panels.cpp). Both emit code for the same
// contraction at the same place: the contraction and the kernels fused
// with it, the builder, and the values of the loop dimensions where code
// is being emitted.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOST_TILECONTEXT_H
#define KILN_CODEGEN_HOST_TILECONTEXT_H

#include "codegen/host/ContractionFusion.h"
#include "codegen/host/VectorBody.h"

#include "codegen/common/Buffers.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::host {

/// The contraction being emitted, with the kernels fused with it, and the
/// builder and loop-dimension values where its code goes; the index and
/// vector helpers both emitters use.
class TileContext {
protected:
  TileContext(linalg::GenericOp op, const Roles &roles, Fusion fusion, int64_t width, OpBuilder b,
              Location loc)
      : op(op), roles(roles), fusion(fusion), width(width), b(b), loc(loc),
        maps(op.getIndexingMapsArray()), ranges(op.getStaticLoopRanges()), dims(ranges.size()) {}

  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  Value plus(Value base, int64_t offset) {
    return offset == 0 ? base : arith::AddIOp::create(b, loc, base, index(offset)).getResult();
  }

  /// The indices of an operand read through `map` at `at` (the loop
  /// dimensions' values).
  SmallVector<Value> indices(AffineMap map, ArrayRef<Value> at) {
    return indicesAt(b, loc, map, at);
  }

  SmallVector<Value> delinearize(Value value, ArrayRef<int64_t> extents) {
    return kiln::delinearize(b, loc, value, extents);
  }

  /// Emits `body(value)` inside a loop over [0, extent).
  void loop(int64_t extent, llvm::function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, index(0), index(extent), index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    body(forOp.getInductionVar());
  }

  /// The extent of loop `dim`: its static size, or the size of an operand
  /// dimension it runs along (a run-time batch or rows).
  OpFoldResult extent(unsigned dim) {
    if (!ShapedType::isDynamic(ranges[dim]))
      return b.getIndexAttr(ranges[dim]);
    for (auto [operand, map] : llvm::zip(op->getOperands(), maps))
      for (auto [position, result] : llvm::enumerate(map.getResults()))
        if (auto at = dyn_cast<AffineDimExpr>(result); at && at.getPosition() == dim)
          return memref::DimOp::create(b, loc, operand, int64_t(position)).getResult();
    llvm_unreachable("a loop of a linalg op runs along an operand's dimension");
  }

  Value value(OpFoldResult size) { return getValueOrCreateConstantIndexOp(b, loc, size); }

  VectorType vectorType(Type element) { return VectorType::get({width}, element); }

  /// A mask of the first `lanes` lanes of a vector.
  Value laneMask(int64_t lanes) {
    return vector::ConstantMaskOp::create(b, loc, vectorType(b.getI1Type()),
                                          ArrayRef<int64_t>{lanes});
  }

  /// The mask of a vector from `offset` of `left` columns a run gives:
  /// min(left - offset, width) lanes, none when negative.
  Value leftMask(Value left, int64_t offset) {
    Value lanes = arith::MinSIOp::create(b, loc, arith::SubIOp::create(b, loc, left, index(offset)),
                                         index(width));
    return vector::CreateMaskOp::create(b, loc, vectorType(b.getI1Type()), ValueRange{lanes});
  }

  /// A vector of f32 zeros.
  Value zeros() { return splat(b, loc, vectorType(b.getF32Type()), b.getF32FloatAttr(0)); }

  Value load(Value memref, ValueRange at, Value mask) {
    return loadLanes(b, loc, vectorType(b.getF32Type()), memref, at, mask);
  }

  void store(Value value, Value memref, ValueRange at, Value mask) {
    storeLanes(b, loc, value, memref, at, mask);
  }

  linalg::GenericOp op;
  const Roles &roles;
  Fusion fusion;
  /// The lanes of a vector.
  int64_t width;
  OpBuilder b;
  Location loc;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> ranges;
  /// The value of each loop dimension where code is being emitted.
  SmallVector<Value> dims;
};

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_TILECONTEXT_H
