// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- RebaseSlices.cpp - a slice's place in its view's offset ------------===//
//
// A concatenation's inputs are written in place, each into a slice of the
// buffer they make: DenseNet's layers each write 32 channels of their
// block's buffer at a channel offset of their own. With static sizes such
// a slice is contiguous, a buffer a kernel function takes; with a batch a
// run gives it is strided (a batch's channels, then the next batch's), so
// kiln-outline-kernels clones it into the kernel, its offset a constant of
// the kernel's body, and each layer's kernels are functions of their own
// (DenseNet-121's symbolic compile took 2.3 times a static one's). Here a
// slice at constant offsets of an arena view becomes a slice at offset 0
// of a view that many bytes further on:
//
//   %v = memref.view %arena[%at][%n] : ... to memref<?x256x28x28xf32>
//   %s = memref.subview %v[0, 128, 0, 0] [%n, 32, 28, 28] [1, 1, 1, 1]
//   ->
//   %w = memref.view %arena[%at + 128 * 28 * 28 * 4][%n] : ... to memref<?x256x28x28xf32>
//   %s = memref.subview %w[0, 0, 0, 0] [%n, 32, 28, 28] [1, 1, 1, 1]
//
// and the types of the views taken of it follow. The view reaches past its
// buffer's end by as much; nothing reads it there.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {

#define GEN_PASS_DEF_REBASESLICES
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// The elements between the start of `view` (identity layout) and
/// `slice`'s first, when its offsets are constants, its strides 1 and
/// each offset's stride static; else none.
std::optional<int64_t> sliceStart(memref::SubViewOp slice, MemRefType view) {
  if (!llvm::all_of(slice.getStaticStrides(), [](int64_t stride) { return stride == 1; }))
    return std::nullopt;
  int64_t start = 0, stride = 1;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  for (int64_t dim = view.getRank() - 1; dim >= 0; --dim) {
    if (ShapedType::isDynamic(offsets[dim]))
      return std::nullopt;
    if (offsets[dim] != 0) {
      if (ShapedType::isDynamic(stride))
        return std::nullopt;
      start += offsets[dim] * stride;
    }
    int64_t size = view.getDimSize(dim);
    stride = ShapedType::isDynamic(size) || ShapedType::isDynamic(stride) ? ShapedType::kDynamic
                                                                          : stride * size;
  }
  return start;
}

/// The type `user` (a slice, collapse or expand of `source`, of its new
/// type) now has; null for any other op with a buffer result, whose type
/// could not follow.
MemRefType followingType(Operation *user, MemRefType source) {
  if (auto slice = dyn_cast<memref::SubViewOp>(user))
    return memref::SubViewOp::inferRankReducedResultType(
        slice.getType().getShape(), source, slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(user))
    return memref::CollapseShapeOp::computeCollapsedType(source,
                                                         collapse.getReassociationIndices());
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(user)) {
    FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
        source, expand.getType().getShape(), expand.getReassociationIndices());
    return succeeded(type) ? *type : MemRefType();
  }
  return {};
}

/// The results whose types follow from `value`'s being `type`, with their
/// types, users first met first; fails on a use the change cannot reach
/// (an op with a buffer result other than a slice or reshape, or one
/// whose type would not be valid).
LogicalResult collectFollowing(Value value, MemRefType type,
                               SmallVectorImpl<std::pair<Value, MemRefType>> &changes) {
  for (Operation *user : value.getUsers()) {
    bool viewsIt =
        isa<ViewLikeOpInterface>(user) && cast<ViewLikeOpInterface>(user).getViewSource() == value;
    if (!viewsIt) {
      if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<MemRefType>) ||
          isa<func::CallOp, func::ReturnOp>(user))
        return failure();
      continue;
    }
    MemRefType following = followingType(user, type);
    if (!following)
      return failure();
    changes.push_back({user->getResult(0), following});
    if (failed(collectFollowing(user->getResult(0), following, changes)))
      return failure();
  }
  return success();
}

struct RebaseSlices : impl::RebaseSlicesBase<RebaseSlices> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    SmallVector<memref::SubViewOp> slices;
    for (auto slice : main.getBody().front().getOps<memref::SubViewOp>())
      slices.push_back(slice);
    for (memref::SubViewOp slice : slices) {
      auto view = slice.getSource().getDefiningOp<memref::ViewOp>();
      if (!view || !view.getType().getLayout().isIdentity() ||
          view.getType().getElementTypeBitWidth() % 8 != 0)
        continue;
      std::optional<int64_t> start = sliceStart(slice, view.getType());
      if (!start || *start == 0)
        continue;
      SmallVector<OpFoldResult> zeros(view.getType().getRank(), OpBuilder(slice).getIndexAttr(0));
      MemRefType rebased = memref::SubViewOp::inferRankReducedResultType(
          slice.getType().getShape(), view.getType(), zeros, slice.getMixedSizes(),
          slice.getMixedStrides());
      SmallVector<std::pair<Value, MemRefType>> changes;
      if (failed(collectFollowing(slice.getResult(), rebased, changes)))
        continue;
      OpBuilder b(slice);
      Location loc = slice.getLoc();
      Value bytes = arith::ConstantIndexOp::create(
          b, loc, *start * int64_t(view.getType().getElementTypeBitWidth() / 8));
      Value at = arith::AddIOp::create(b, loc, view.getByteShift(), bytes);
      auto moved =
          memref::ViewOp::create(b, loc, view.getType(), view.getSource(), at, view.getSizes());
      auto replacement = memref::SubViewOp::create(b, loc, rebased, moved, zeros,
                                                   slice.getMixedSizes(), slice.getMixedStrides());
      slice.replaceAllUsesWith(replacement.getResult());
      slice.erase();
      for (auto [value, type] : changes)
        value.setType(type);
    }
  }
};

} // namespace
} // namespace kiln
