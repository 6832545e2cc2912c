//===- Bufferize.cpp - One-Shot bufferization with linalg copies ----------===//

#include "passes/Buffers.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {

#define GEN_PASS_DEF_BUFFERIZE
#include "passes/Passes.h.inc"

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

/// Whether an op accessing buffer `root`, other than `except`, writes into
/// [first, end) of it, or, with `after`, whether one after `after` writes
/// any of it. Unknown writes count.
bool writes(mlir::Value root, mlir::Operation *except, std::pair<int64_t, int64_t> range,
            mlir::Operation *after = nullptr) {
  for (mlir::Operation *access : accessesOf(root)) {
    if (access == except || (after && access->isBeforeInBlock(after)))
      continue;
    std::optional<llvm::SmallVector<mlir::Value>> buffers = written(access);
    if (!buffers)
      return true;
    for (mlir::Value buffer : *buffers) {
      if (rootOf(buffer) != root)
        continue;
      std::optional<std::pair<int64_t, int64_t>> at = span(buffer);
      if (!at || after || (at->first < range.second && range.first < at->second))
        return true;
    }
  }
  return false;
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
    // The same elements at the same places: same shape, same strides where
    // a dimension has more than one element, same offset.
    auto sourceType = llvm::cast<mlir::MemRefType>(source.getType());
    auto targetType = llvm::cast<mlir::MemRefType>(target.getType());
    llvm::SmallVector<int64_t> sourceStrides, targetStrides;
    int64_t sourceOffset, targetOffset;
    std::optional<std::pair<int64_t, int64_t>> range = span(target);
    if (!range || !span(source) || sourceType.getShape() != targetType.getShape() ||
        failed(sourceType.getStridesAndOffset(sourceStrides, sourceOffset)) ||
        failed(targetType.getStridesAndOffset(targetStrides, targetOffset)) ||
        sourceOffset != targetOffset || q.getType().getNumElements() > p.getType().getNumElements())
      continue;
    bool sameStrides = true;
    for (auto [size, a, b] : llvm::zip(sourceType.getShape(), sourceStrides, targetStrides))
      sameStrides &= size == 1 || a == b;
    if (!sameStrides || writes(p, copy, *range) || writes(q, copy, {0, 0}, copy))
      continue;
    // P is allocated where Q was, and Q is P's start.
    if (q->isBeforeInBlock(p))
      p->moveBefore(q);
    mlir::OpBuilder builder(q);
    llvm::SmallVector<int64_t> identity =
        mlir::computeSuffixProduct(llvm::to_vector(q.getType().getShape()));
    auto view =
        mlir::memref::ReinterpretCastOp::create(builder, q.getLoc(), q.getType(), p,
                                                /*offset=*/0, q.getType().getShape(), identity);
    q.getResult().replaceAllUsesWith(view.getResult());
    q.erase();
    copy.erase();
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
  }
};

} // namespace
} // namespace kiln
