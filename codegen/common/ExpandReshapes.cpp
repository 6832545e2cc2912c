// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ExpandReshapes.cpp - reshapes of several run-time sizes a group ----===//
//
// MLIR 22's expand-strided-metadata takes a memref.expand_shape's sizes
// from its source, which gives one run-time size per group at most: an
// expand of a symbolic reshape (batch x seq rows from batch * seq, or from
// a flat buffer) crashes it. A contiguous one is a reinterpret_cast with the
// sizes the op names and the strides they make.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {

#define GEN_PASS_DEF_EXPANDRESHAPES
#include "codegen/common/Passes.h.inc"

namespace {

using namespace mlir;

/// Whether a group of `expand` has more than one run-time size.
bool hasDynamicGroup(memref::ExpandShapeOp expand) {
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  return llvm::any_of(expand.getReassociationIndices(), [&](const ReassociationIndices &group) {
    return llvm::count_if(group, [&](int64_t d) { return ShapedType::isDynamic(shape[d]); }) > 1;
  });
}

struct ExpandReshapes : impl::ExpandReshapesBase<ExpandReshapes> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> expands;
    getOperation().walk([&](memref::ExpandShapeOp expand) {
      if (hasDynamicGroup(expand))
        expands.push_back(expand);
    });
    for (memref::ExpandShapeOp expand : expands) {
      MemRefType source = expand.getSrcType(), result = expand.getResultType();
      if (!source.getLayout().isIdentity() || !result.getLayout().isIdentity()) {
        expand.emitError("cannot expand a strided buffer into several run-time sizes a group");
        return signalPassFailure();
      }
      OpBuilder b(expand);
      Location loc = expand.getLoc();
      SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
      SmallVector<OpFoldResult> strides(sizes.size());
      OpFoldResult stride = b.getIndexAttr(1);
      for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
        strides[d] = stride;
        if (d == 0)
          break;
        std::optional<int64_t> a = getConstantIntValue(stride), c = getConstantIntValue(sizes[d]);
        if (a && c)
          stride = b.getIndexAttr(*a * *c);
        else
          stride = arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                                         getValueOrCreateConstantIndexOp(b, loc, sizes[d]))
                       .getResult();
      }
      auto cast = memref::ReinterpretCastOp::create(b, loc, result, expand.getSrc(),
                                                    b.getIndexAttr(0), sizes, strides);
      expand.replaceAllUsesWith(cast.getResult());
      expand.erase();
    }
  }
};

} // namespace
} // namespace kiln
