// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Bufferize.cpp - One-Shot bufferization with linalg copies ----------===//

#include "codegen/common/Buffers.h"
#include "codegen/common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_BUFFERIZE
#include "codegen/common/Passes.h.inc"

namespace {

/// Whether `a` and `b` are the same memory: one value, or the same slice of
/// one buffer.
bool sameMemory(mlir::Value a, mlir::Value b) {
  if (a == b)
    return true;
  auto sliceA = a.getDefiningOp<mlir::memref::SubViewOp>();
  auto sliceB = b.getDefiningOp<mlir::memref::SubViewOp>();
  return sliceA && sliceB && sliceA.getSource() == sliceB.getSource() &&
         sliceA.getType() == sliceB.getType() &&
         mlir::isEqualConstantIntOrValueArray(sliceA.getMixedOffsets(), sliceB.getMixedOffsets()) &&
         mlir::isEqualConstantIntOrValueArray(sliceA.getMixedSizes(), sliceB.getMixedSizes()) &&
         mlir::isEqualConstantIntOrValueArray(sliceA.getMixedStrides(), sliceB.getMixedStrides());
}

/// Erases the copies of a slice onto itself that bufferizing leaves where a
/// producer already wrote into its concatenation's slice, and the slices
/// only they used.
void eraseSelfCopies(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::linalg::CopyOp> copies;
  module.walk([&](mlir::linalg::CopyOp copy) {
    if (copy.hasPureBufferSemantics() && sameMemory(copy.getDpsInputs()[0], copy.getDpsInits()[0]))
      copies.push_back(copy);
  });
  for (mlir::linalg::CopyOp copy : copies) {
    llvm::SmallVector<mlir::Value> operands = {copy.getDpsInputs()[0], copy.getDpsInits()[0]};
    copy.erase();
    for (mlir::Value operand : operands)
      if (auto slice = operand.getDefiningOp<mlir::memref::SubViewOp>();
          slice && slice->use_empty())
        slice.erase();
  }
}

/// The elements of its root buffer that view `value` spans, from its
/// strided type: [first, end). None for a dynamic layout or shape.
std::optional<std::pair<int64_t, int64_t>> span(mlir::Value value) {
  auto type = llvm::dyn_cast<mlir::MemRefType>(value.getType());
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || !type.hasStaticShape() || failed(type.getStridesAndOffset(strides, offset)) ||
      mlir::ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, [](int64_t stride) { return mlir::ShapedType::isDynamic(stride); }))
    return std::nullopt;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (size == 0)
      return std::pair<int64_t, int64_t>{offset, offset};
    last += (size - 1) * stride;
  }
  return std::pair<int64_t, int64_t>{offset, last + 1};
}

/// The buffers `op` writes, among its operands: a linalg op's outputs.
/// None when it may write others (then nothing about it is assumed).
std::optional<llvm::SmallVector<mlir::Value>> written(mlir::Operation *op) {
  if (auto linalgOp = llvm::dyn_cast<mlir::linalg::LinalgOp>(op))
    return llvm::SmallVector<mlir::Value>(linalgOp.getDpsInits());
  if (mlir::isMemoryEffectFree(op) || llvm::isa<mlir::func::ReturnOp>(op))
    return llvm::SmallVector<mlir::Value>();
  return std::nullopt;
}

/// Whether an op accessing buffer `root`, but those `ignored`, writes into
/// [first, end) of it (all of it without `range`). Unknown writes count.
bool writes(mlir::Value root, std::optional<std::pair<int64_t, int64_t>> range,
            llvm::function_ref<bool(mlir::Operation *)> ignored) {
  for (mlir::Operation *access : accessesOf(root)) {
    if (ignored(access))
      continue;
    std::optional<llvm::SmallVector<mlir::Value>> buffers = written(access);
    if (!buffers)
      return true;
    for (mlir::Value buffer : *buffers) {
      if (rootOf(buffer) != root)
        continue;
      std::optional<std::pair<int64_t, int64_t>> at = span(buffer);
      if (!at || !range || (at->first < range->second && range->first < at->second))
        return true;
    }
  }
  return false;
}

/// Whether views `a` and `b` (of different buffers) hold the same elements
/// at the same offsets from their buffers' starts: one shape, the same
/// strides where a dimension has more than one element, one offset.
bool samePlaces(mlir::Value a, mlir::Value b) {
  auto aType = llvm::cast<mlir::MemRefType>(a.getType());
  auto bType = llvm::cast<mlir::MemRefType>(b.getType());
  llvm::SmallVector<int64_t> aStrides, bStrides;
  int64_t aOffset, bOffset;
  if (aType.getShape() != bType.getShape() ||
      failed(aType.getStridesAndOffset(aStrides, aOffset)) ||
      failed(bType.getStridesAndOffset(bStrides, bOffset)) || aOffset != bOffset ||
      mlir::ShapedType::isDynamic(aOffset))
    return false;
  for (auto [size, aStride, bStride] : llvm::zip(aType.getShape(), aStrides, bStrides))
    if (size != 1 && aStride != bStride)
      return false;
  return true;
}

/// Replaces buffer `inner` by a view of `outer`'s start, `outer` now
/// allocated where `inner` was (if it was later).
void becomeStartOf(mlir::memref::AllocOp inner, mlir::memref::AllocOp outer) {
  if (inner->isBeforeInBlock(outer))
    outer->moveBefore(inner);
  mlir::OpBuilder builder(inner);
  mlir::MemRefType type = inner.getType();
  llvm::SmallVector<int64_t> identity =
      mlir::computeSuffixProduct(llvm::to_vector(type.getShape()));
  auto view = mlir::memref::ReinterpretCastOp::create(builder, inner.getLoc(), type, outer,
                                                      /*offset=*/0, type.getShape(), identity);
  inner.getResult().replaceAllUsesWith(view.getResult());
  inner.erase();
}

/// Makes a concatenation's earlier inputs live in place in the later one.
/// DenseNet's block concatenates each layer's features onto all before
/// them; computed in place (eliminateEmptyTensors), each concatenation is
/// still copied whole into the next one's buffer, a prefix of it. Where a
/// copy reads all that is used of a buffer Q and writes the same elements
/// at the same places of a buffer P, and nothing else writes those
/// elements of P nor anything of Q after the copy, Q becomes a view of P's
/// start and the copy goes. Later copies go first, so a block's buffers
/// all become views of its last.
void aliasCopiedPrefixes(mlir::func::FuncOp function) {
  llvm::SmallVector<mlir::linalg::CopyOp> copies;
  function.walk([&](mlir::linalg::CopyOp copy) {
    if (copy.hasPureBufferSemantics() && copy->getBlock() == &function.getBody().front())
      copies.push_back(copy);
  });
  for (mlir::linalg::CopyOp copy : llvm::reverse(copies)) {
    mlir::Value source = copy.getDpsInputs()[0], target = copy.getDpsInits()[0];
    // Q: the source, or the buffer the source alone slices.
    auto q = source.getDefiningOp<mlir::memref::AllocOp>();
    if (auto slice = source.getDefiningOp<mlir::memref::SubViewOp>()) {
      q = slice.getSource().getDefiningOp<mlir::memref::AllocOp>();
      if (!q || !q->hasOneUse())
        continue;
    }
    auto p = rootOf(target).getDefiningOp<mlir::memref::AllocOp>();
    if (!q || !p || p == q || !q.getType().getLayout().isIdentity() ||
        !p.getType().getLayout().isIdentity() || q->getBlock() != copy->getBlock() ||
        p->getBlock() != copy->getBlock() ||
        q.getType().getElementType() != p.getType().getElementType())
      continue;
    // The same elements at the same places, and nothing else writing them
    // in P, nor Q after the copy.
    std::optional<std::pair<int64_t, int64_t>> range = span(target);
    if (!range || !span(source) || !samePlaces(source, target) ||
        q.getType().getNumElements() > p.getType().getNumElements() ||
        writes(p, range, [&](mlir::Operation *access) { return access == copy; }) ||
        writes(q, std::nullopt,
               [&](mlir::Operation *access) { return !copy->isBeforeInBlock(access); }))
      continue;
    becomeStartOf(q, p);
    copy.erase();
  }
}

/// Makes a concatenation whose every input the next one copies again, at
/// the same places, a view of the next one's start. DenseNet's export
/// concatenates each layer's inputs flat: every feature map of a block is
/// copied into every later concatenation. Where every write of a buffer C
/// is a copy, and a later buffer D is written, where C's elements lie, only
/// by copies of the same sources to the same places, C becomes a view of
/// D's start: C's copies now write D, and D's repeats of them go (a
/// source written again after C's copy keeps C as it is). Later buffers go
/// first, so a block's concatenations all become views of its last.
void aliasRepeatedCopies(mlir::func::FuncOp function) {
  mlir::Block &body = function.getBody().front();
  llvm::SmallVector<mlir::memref::AllocOp> allocs(body.getOps<mlir::memref::AllocOp>());
  for (mlir::memref::AllocOp c : llvm::reverse(allocs)) {
    if (!c.getType().getLayout().isIdentity() || !c.getType().hasStaticShape())
      continue;
    // C's writes: copies alone, each to a known place.
    llvm::SmallVector<mlir::linalg::CopyOp> copies;
    bool onlyCopies = true;
    for (mlir::Operation *access : accessesOf(c)) {
      std::optional<llvm::SmallVector<mlir::Value>> buffers = written(access);
      bool writesC = !buffers || llvm::any_of(*buffers, [&](mlir::Value buffer) {
        return rootOf(buffer) == c.getResult();
      });
      if (!writesC)
        continue;
      auto copy = llvm::dyn_cast<mlir::linalg::CopyOp>(access);
      if (!copy || !copy.hasPureBufferSemantics() || !span(copy.getDpsInits()[0]) ||
          rootOf(copy.getDpsInits()[0]) != c.getResult())
        onlyCopies = false;
      else
        copies.push_back(copy);
    }
    if (!onlyCopies || copies.empty())
      continue;
    // D: the buffer another copy of C's first source writes, after it, at
    // the same place.
    auto repeat = [&](mlir::linalg::CopyOp copy, mlir::Value root) -> mlir::linalg::CopyOp {
      mlir::Value source = copy.getDpsInputs()[0];
      for (mlir::Operation *user : source.getUsers()) {
        auto other = llvm::dyn_cast<mlir::linalg::CopyOp>(user);
        if (!other || other == copy || other.getDpsInputs()[0] != source ||
            other->getBlock() != &body || !copy->isBeforeInBlock(other) ||
            (root && rootOf(other.getDpsInits()[0]) != root) ||
            span(other.getDpsInits()[0]) != span(copy.getDpsInits()[0]) ||
            !samePlaces(other.getDpsInits()[0], copy.getDpsInits()[0]))
          continue;
        return other;
      }
      return {};
    };
    // A copy from D itself, to the same place, is one the view makes a copy
    // onto itself (the last layer's features, computed in D's slice).
    auto fromD = [](mlir::linalg::CopyOp copy, mlir::Value d) {
      mlir::Value source = copy.getDpsInputs()[0];
      return rootOf(source) == d && span(source) && samePlaces(source, copy.getDpsInits()[0]);
    };
    mlir::Value d;
    for (mlir::linalg::CopyOp copy : copies) {
      if (mlir::linalg::CopyOp other = repeat(copy, mlir::Value()))
        d = rootOf(other.getDpsInits()[0]);
      else if (fromD(copy, rootOf(copy.getDpsInputs()[0])))
        d = rootOf(copy.getDpsInputs()[0]);
      if (d)
        break;
    }
    if (!d)
      continue;
    auto dAlloc = d.getDefiningOp<mlir::memref::AllocOp>();
    if (!dAlloc || dAlloc == c || !dAlloc.getType().getLayout().isIdentity() ||
        dAlloc.getType().getElementType() != c.getType().getElementType() ||
        dAlloc.getType().getNumElements() < c.getType().getNumElements())
      continue;
    // Each of C's copies is repeated into D, from a source nothing writes
    // after C's copy.
    llvm::SmallVector<mlir::linalg::CopyOp> repeats, ontoThemselves;
    for (mlir::linalg::CopyOp copy : copies) {
      if (fromD(copy, d)) {
        ontoThemselves.push_back(copy);
        continue;
      }
      mlir::linalg::CopyOp other = repeat(copy, d);
      mlir::Value source = copy.getDpsInputs()[0];
      if (!other || writes(rootOf(source), span(source),
                           [&](mlir::Operation *access) { return !copy->isBeforeInBlock(access); }))
        break;
      repeats.push_back(other);
    }
    if (repeats.size() + ontoThemselves.size() != copies.size())
      continue;
    // Nothing else writes D where C's elements lie, but what D's own slice
    // computes before C copies it from there.
    auto slicedBefore = [&](mlir::Operation *access) {
      std::optional<llvm::SmallVector<mlir::Value>> buffers = written(access);
      return buffers && llvm::all_of(*buffers, [&](mlir::Value buffer) {
               std::optional<std::pair<int64_t, int64_t>> at = span(buffer);
               return rootOf(buffer) != d ||
                      (at && llvm::any_of(ontoThemselves, [&](mlir::linalg::CopyOp copy) {
                         std::optional<std::pair<int64_t, int64_t>> from =
                             span(copy.getDpsInputs()[0]);
                         return access->isBeforeInBlock(copy) && from->first <= at->first &&
                                at->second <= from->second;
                       }));
             });
    };
    if (writes(d, std::pair<int64_t, int64_t>{0, c.getType().getNumElements()},
               [&](mlir::Operation *access) {
                 return llvm::is_contained(repeats, access) || slicedBefore(access);
               }))
      continue;
    becomeStartOf(c, dAlloc);
    for (mlir::linalg::CopyOp other : llvm::concat<mlir::linalg::CopyOp>(repeats, ontoThemselves))
      other.erase();
  }
}

struct Bufferize : impl::BufferizeBase<Bufferize> {
  void runOnOperation() override {
    namespace bufferization = mlir::bufferization;
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(bufferization::LayoutMapOption::IdentityLayoutMap);
    options.memCpyFn = [](mlir::OpBuilder &builder, mlir::Location loc, mlir::Value from,
                          mlir::Value to) {
      mlir::linalg::CopyOp::create(builder, loc, from, to);
      return mlir::success();
    };
    // A slice's sizes a run gives are read off the tensor inserted
    // (tensor.dim), which is computed after the empty tensor it was
    // computed into: the sizes become the values that empty tensor was
    // made with, which come before it, so that it can become the slice.
    llvm::SmallVector<mlir::Operation *> dims;
    getOperation().walk([&](mlir::tensor::DimOp dim) { dims.push_back(dim); });
    if (!dims.empty()) {
      mlir::RewritePatternSet patterns(&getContext());
      mlir::tensor::DimOp::getCanonicalizationPatterns(patterns, &getContext());
      mlir::tensor::EmptyOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)mlir::applyOpPatternsGreedily(dims, std::move(patterns));
    }
    // A result inserted into a slice of a tensor (a Concat's input) is
    // computed in that slice where the analysis allows: no buffer of its
    // own, no copy.
    mlir::IRRewriter rewriter(&getContext());
    if (failed(bufferization::eliminateEmptyTensors(rewriter, getOperation())))
      return signalPassFailure();
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(getOperation(), options, state)))
      return signalPassFailure();
    eraseSelfCopies(getOperation());
    getOperation().walk(aliasCopiedPrefixes);
    getOperation().walk(aliasRepeatedCopies);
  }
};

} // namespace
} // namespace kiln
