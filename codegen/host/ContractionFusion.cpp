// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ContractionFusion.cpp - what joins a host product ------------------===//

#include "codegen/host/ContractionFusion.h"

#include "codegen/host/VectorBody.h"

#include "codegen/common/Buffers.h"
#include "codegen/common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln::host {

namespace {

/// An f32 buffer of at least one dimension, whose sizes a run may give
/// (which loops may read them is checked with the roles).
bool isF32RunBuffer(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getRank() > 0 && type.getElementType().isF32();
}

std::optional<unsigned> dimAt(AffineMap map, int64_t result) {
  if (result < 0 || result >= int64_t(map.getNumResults()))
    return std::nullopt;
  if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(result)))
    return dim.getPosition();
  return std::nullopt;
}

/// For each dimension of `shape`, the dimensions of `source` (the same
/// elements, row-major) it flattens, or nothing when one splits a
/// dimension. Unit dimensions of `source` may be left out of every group.
/// A size a run gives is a group of its own, the same dimension of both,
/// or, as `shape`'s last, flattens what is left of `source` (a run's
/// output positions, oh x ow).
std::optional<SmallVector<SmallVector<int64_t>>> flatteningGroups(ArrayRef<int64_t> source,
                                                                  ArrayRef<int64_t> shape) {
  SmallVector<SmallVector<int64_t>> groups;
  int64_t at = 0, size = source.size();
  for (auto [i, extent] : llvm::enumerate(shape)) {
    SmallVector<int64_t> group;
    if (ShapedType::isDynamic(extent)) {
      int64_t from = at;
      while (at < size && source[at] == 1)
        ++at;
      bool own = at < size && ShapedType::isDynamic(source[at]) &&
                 llvm::all_of(source.drop_front(at + 1), [](int64_t e) { return e == 1; });
      if (i + 1 < shape.size() || own) {
        if (at == size || !ShapedType::isDynamic(source[at]))
          return std::nullopt;
        groups.push_back({at++});
        continue;
      }
      if (llvm::none_of(source.drop_front(from), ShapedType::isDynamic))
        return std::nullopt;
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(from, size)));
      return groups;
    }
    int64_t product = 1;
    while (extent != 1 && at < size && product < extent) {
      if (ShapedType::isDynamic(source[at]))
        return std::nullopt;
      product *= source[at];
      group.push_back(at++);
    }
    if (product != extent)
      return std::nullopt;
    groups.push_back(std::move(group));
  }
  if (!llvm::all_of(source.drop_front(at), [](int64_t e) { return e == 1; }))
    return std::nullopt;
  return groups;
}

/// P when `map` reads a B packed by kiln-pack-weights, B'[N / P][K][P], as
/// (d floordiv P, k, d mod P) for loops d and k.
std::optional<int64_t> packedPanel(AffineMap map, MemRefType type) {
  if (map.getNumResults() != 3 || type.getRank() != 3 || !isa<AffineDimExpr>(map.getResult(1)))
    return std::nullopt;
  auto quotient = dyn_cast<AffineBinaryOpExpr>(map.getResult(0));
  auto remainder = dyn_cast<AffineBinaryOpExpr>(map.getResult(2));
  if (!quotient || !remainder || quotient.getKind() != AffineExprKind::FloorDiv ||
      remainder.getKind() != AffineExprKind::Mod || quotient.getLHS() != remainder.getLHS() ||
      !isa<AffineDimExpr>(quotient.getLHS()))
    return std::nullopt;
  auto panel = dyn_cast<AffineConstantExpr>(quotient.getRHS());
  if (!panel || remainder.getRHS() != panel || panel.getValue() != type.getDimSize(2))
    return std::nullopt;
  return panel.getValue();
}

/// R when `map` reads an A packed by kiln-pack-weights, A'[.., M / R, K, R],
/// as (.., d floordiv R, k, d mod R) for loops d and k, the rest loops or
/// constants.
std::optional<int64_t> packedRows(AffineMap map, MemRefType type) {
  int64_t results = map.getNumResults();
  if (results < 3 || type.getRank() != results || !isa<AffineDimExpr>(map.getResult(results - 2)) ||
      !onlyDimsAndConstants(map.getSliceMap(0, results - 3)))
    return std::nullopt;
  auto quotient = dyn_cast<AffineBinaryOpExpr>(map.getResult(results - 3));
  auto remainder = dyn_cast<AffineBinaryOpExpr>(map.getResult(results - 1));
  if (!quotient || !remainder || quotient.getKind() != AffineExprKind::FloorDiv ||
      remainder.getKind() != AffineExprKind::Mod || quotient.getLHS() != remainder.getLHS() ||
      !isa<AffineDimExpr>(quotient.getLHS()))
    return std::nullopt;
  auto rows = dyn_cast<AffineConstantExpr>(quotient.getRHS());
  if (!rows || remainder.getRHS() != rows || rows.getValue() != type.getDimSize(results - 1))
    return std::nullopt;
  return rows.getValue();
}

/// Where the epilogue's (of shape `epilogue`) column dimensions start when
/// C's (of shape `c`) are `columns`, static: its trailing dimensions of as
/// many elements. A row of the epilogue is found from C's indices: the same
/// ones when its row dimensions are C's, or else those of the same row of
/// elements, which a run's size may change only in the first dimension of
/// each (a convolution's batch, over groups and channels).
std::optional<int64_t> staticColumnsSplit(ArrayRef<int64_t> c, ArrayRef<int64_t> epilogue,
                                          int64_t columns) {
  int64_t split = epilogue.size(), product = 1;
  while (split > 0 && product < columns && !ShapedType::isDynamic(epilogue[split - 1]))
    product *= epilogue[--split];
  if (product != columns || split == int64_t(epilogue.size()))
    return std::nullopt;
  auto staticButFirst = [](ArrayRef<int64_t> sizes) {
    return llvm::none_of(sizes.drop_front(), ShapedType::isDynamic);
  };
  if (c.drop_back() != epilogue.take_front(split) &&
      !(staticButFirst(c) && staticButFirst(epilogue)))
    return std::nullopt;
  return split;
}

/// Whether `type`'s dimensions [split, rank) are one run of elements.
bool columnsContiguous(MemRefType type, int64_t split) {
  if (split >= type.getRank())
    return false;
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < split; ++i)
    groups.push_back({i});
  groups.emplace_back(llvm::to_vector(llvm::seq<int64_t>(split, type.getRank())));
  return hasUnitInnermostStride(type) &&
         memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups);
}

/// The size of `memref`'s dimension `dim` that a run gives, where the op
/// that makes the buffer states it (an allocation or an expand_shape).
Value statedSize(Value memref, int64_t dim) {
  auto type = cast<MemRefType>(memref.getType());
  if (auto alloc = memref.getDefiningOp<memref::AllocOp>())
    return alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)];
  if (auto expand = memref.getDefiningOp<memref::ExpandShapeOp>())
    return dyn_cast<Value>(expand.getMixedOutputShape()[dim]);
  return {};
}

/// The same when a run gives the columns of `c` (a convolution's output
/// positions over a run's image), for an epilogue writing `output`: C's
/// rows are static but for a first dimension of the same size as the
/// epilogue's (a batch), and the epilogue's rows are its longest leading
/// dimensions of as many elements. Both views hold C's elements, so the
/// columns left are C's at every run.
std::optional<int64_t> runColumnsSplit(Value c, Value output) {
  ArrayRef<int64_t> rows = cast<MemRefType>(c.getType()).getShape().drop_back();
  ArrayRef<int64_t> epilogue = cast<MemRefType>(output.getType()).getShape();
  int64_t first = 0;
  if (!rows.empty() && ShapedType::isDynamic(rows.front())) {
    Value size = statedSize(c, 0);
    if (!size || !ShapedType::isDynamic(epilogue.front()) || statedSize(output, 0) != size)
      return std::nullopt;
    first = 1;
  }
  if (llvm::any_of(rows.drop_front(first), ShapedType::isDynamic))
    return std::nullopt;
  int64_t rowElements = 1;
  for (int64_t size : rows.drop_front(first))
    rowElements *= size;
  std::optional<int64_t> split;
  if (rowElements == 1)
    split = first;
  int64_t product = 1;
  for (int64_t i = first; i < int64_t(epilogue.size()) && !ShapedType::isDynamic(epilogue[i]);
       ++i) {
    product *= epilogue[i];
    if (product == rowElements)
      split = i + 1;
  }
  if (split == int64_t(epilogue.size()))
    return std::nullopt;
  return split;
}

} // namespace

std::optional<Roles> contractionRoles(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isMultiplyAdd(op))
    return std::nullopt;
  // Sizes a run gives (a batch, rows, attention's keys) may be m's, k's
  // and the outer loops' (checked below, with the loops' roles).
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  if (!isF32RunBuffer(a) || !isF32RunBuffer(b) || !isF32RunBuffer(c) ||
      !hasUnitInnermostStride(cast<MemRefType>(b.getType())) ||
      !hasUnitInnermostStride(cast<MemRefType>(c.getType())))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap aMap = maps[0], bMap = maps[1], cMap = maps[2];
  std::optional<int64_t> panel = packedPanel(bMap, cast<MemRefType>(b.getType()));
  std::optional<int64_t> rowGroup = packedRows(aMap, cast<MemRefType>(a.getType()));
  if ((!rowGroup && !onlyDimsAndConstants(aMap)) || !onlyDimsAndConstants(cMap) ||
      (!panel && !onlyDimsAndConstants(bMap)))
    return std::nullopt;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> reductions;
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction)
      reductions.push_back(i);
  if (reductions.size() != 1)
    return std::nullopt;
  Roles roles;
  roles.k = reductions.front();
  std::optional<unsigned> n = dimAt(cMap, int64_t(cMap.getNumResults()) - 1);
  std::optional<unsigned> m = dimAt(cMap, int64_t(cMap.getNumResults()) - 2);
  if (!n || !m)
    return std::nullopt;
  if (panel) {
    // B'[n floordiv P, k, n mod P], which packedPanel matched but for n.
    AffineExpr dim = getAffineDimExpr(*n, op.getContext());
    if (bMap.getResult(0) != dim.floorDiv(*panel) || bMap.getResult(2) != dim % *panel)
      return std::nullopt;
    roles.panel = *panel;
  } else if (dimAt(bMap, int64_t(bMap.getNumResults()) - 1) != n) {
    return std::nullopt;
  }
  if (rowGroup) {
    // A'[.., m floordiv R, k, m mod R], which packedRows matched but for m
    // and k.
    AffineExpr dim = getAffineDimExpr(*m, op.getContext());
    int64_t results = aMap.getNumResults();
    if (aMap.getResult(results - 3) != dim.floorDiv(*rowGroup) ||
        aMap.getResult(results - 1) != dim % *rowGroup ||
        aMap.getResult(results - 2) != getAffineDimExpr(roles.k, op.getContext()))
      return std::nullopt;
    roles.rowGroup = *rowGroup;
  }
  roles.m = *m;
  roles.n = *n;
  auto uses = [](AffineMap map, unsigned dim) { return map.isFunctionOfDim(dim); };
  if (uses(aMap, roles.n) || uses(bMap, roles.m) || !uses(aMap, roles.m) || !uses(aMap, roles.k) ||
      !uses(bMap, roles.k) || uses(cMap, roles.k))
    return std::nullopt;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (i != roles.m && i != roles.n && i != roles.k)
      roles.outer.push_back(i);
  // A run may give any of the loops' extents (a batch, rows, attention's
  // keys as k or as the columns), each operand's sizes along loops only;
  // packed weights are static.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (roles.panel && ShapedType::isDynamic(ranges[roles.n]))
    return std::nullopt;
  SmallVector<Value, 3> operands = {a, b, c};
  for (auto [operand, map] : llvm::zip(operands, maps))
    for (auto [size, result] :
         llvm::zip(cast<MemRefType>(operand.getType()).getShape(), map.getResults()))
      if (ShapedType::isDynamic(size) && !isa<AffineDimExpr>(result))
        return std::nullopt;
  return roles;
}

linalg::FillOp zeroFillOf(linalg::GenericOp op) {
  memref::AllocOp alloc = reshapedAlloc(op.getDpsInits()[0]);
  if (!alloc)
    return {};
  SmallVector<Operation *> accesses = accessesOf(alloc);
  linalg::FillOp fill;
  for (Operation *access : accesses)
    if (auto candidate = dyn_cast<linalg::FillOp>(access);
        candidate && candidate->getBlock() == op->getBlock() && candidate->isBeforeInBlock(op))
      fill = candidate;
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
      reshapedAlloc(fill.getOutputs()[0]) != alloc)
    return {};
  // Nothing may see C between the fill and the product.
  for (Operation *between = fill->getNextNode(); between != op; between = between->getNextNode())
    if (llvm::is_contained(accesses, between))
      return {};
  return fill;
}

void findEpilogue(linalg::GenericOp op, const Roles &roles, Fusion &fusion) {
  Operation *next = op->getNextNode();
  while (next && isInert(next))
    next = next->getNextNode();
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
  memref::AllocOp alloc = reshapedAlloc(op.getDpsInits()[0]);
  if (!epilogue || !alloc || !isAllParallel(epilogue) || !isVectorizableBody(epilogue))
    return;
  Value output = epilogue.getDpsInits()[0];
  auto outputType = cast<MemRefType>(output.getType());
  SmallVector<AffineMap> maps = epilogue.getIndexingMapsArray();
  if (!isF32RunBuffer(output) || !maps.back().isIdentity() ||
      !llvm::all_of(maps, onlyDimsAndConstants))
    return;
  for (Operation *access : accessesOf(alloc))
    if (access != op && access != epilogue && access != fusion.zeroFill.getOperation())
      return;
  // Tasks of the product still read A and B while others store results.
  Value root = rootOf(output);
  if (root == rootOf(op.getDpsInputs()[0]) || root == rootOf(op.getDpsInputs()[1]))
    return;

  // C's columns are the trailing dimensions [split, rank) of the epilogue.
  ArrayRef<int64_t> shape = outputType.getShape();
  auto cType = cast<MemRefType>(op.getDpsInits()[0].getType());
  int64_t columns = op.getStaticLoopRanges()[roles.n];
  std::optional<int64_t> split = ShapedType::isDynamic(columns)
                                     ? runColumnsSplit(op.getDpsInits()[0], output)
                                     : staticColumnsSplit(cType.getShape(), shape, columns);
  // The output may be a slice of a concatenation's buffer (strided along
  // its rows when the concatenation's axis is not the first), or have sizes
  // a run gives: its columns must be one run of elements.
  if (!split || !columnsContiguous(outputType, *split))
    return;
  auto isColumnDim = [&](AffineExpr e) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    return dim && dim.getPosition() >= *split;
  };
  SmallVector<unsigned> inputs;
  for (OpOperand *operand : epilogue.getDpsInputOperands()) {
    Value value = operand->get();
    AffineMap map = maps[operand->getOperandNumber()];
    if (rootOf(value) == alloc.getResult()) {
      if (!map.isIdentity() || !reshapedAlloc(value))
        return;
      inputs.push_back(operand->getOperandNumber());
      continue;
    }
    // Read per row (no column dimension), or along the columns: the
    // column dimensions last, in order, over the same extents.
    auto results = map.getResults();
    auto firstColumn = llvm::find_if(results, isColumnDim);
    if (firstColumn == results.end())
      continue;
    int64_t rowResults = firstColumn - results.begin();
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || !isF32RunBuffer(value) || !type.getLayout().isIdentity() ||
        int64_t(results.size()) - rowResults != int64_t(shape.size()) - *split)
      return;
    for (int64_t i = rowResults; i < int64_t(results.size()); ++i) {
      auto dim = dyn_cast<AffineDimExpr>(results[i]);
      if (!dim || dim.getPosition() != *split + (i - rowResults) ||
          type.getDimSize(i) != shape[dim.getPosition()])
        return;
    }
  }
  if (inputs.empty())
    return;
  fusion.epilogue = epilogue;
  fusion.epilogueInputs = std::move(inputs);
  fusion.split = *split;
}

std::optional<Im2colWindow> im2colWindow(linalg::GenericOp producer,
                                         ArrayRef<SmallVector<int64_t>> groups, int64_t width) {
  auto shift = producer->getAttrOfType<DenseI64ArrayAttr>(kIm2colShiftAttr);
  ArrayRef<int64_t> shape = cast<MemRefType>(producer.getDpsInits()[0].getType()).getShape();
  auto loads = producer.getRegion().front().getOps<memref::LoadOp>();
  // B's rows are (c, kh, kw), with batch and group when they are 1; its
  // columns (oh, ow).
  if (!shift || shift.size() != 3 || shape.size() != 7 || groups.size() != 4 ||
      groups[3] != ArrayRef<int64_t>{5, 6} || groups[2].size() < 3 ||
      ArrayRef(groups[2]).take_back(3) != ArrayRef<int64_t>{2, 3, 4} ||
      !llvm::all_of(ArrayRef(groups[2]).drop_back(3), [&](int64_t d) { return shape[d] == 1; }) ||
      llvm::any_of(shape.slice(1, 4), ShapedType::isDynamic) || !llvm::hasSingleElement(loads))
    return std::nullopt;
  Value input = (*loads.begin()).getMemRef();
  auto inputType = cast<MemRefType>(input.getType());
  if (inputType.getRank() != 4 || !inputType.getLayout().isIdentity() ||
      ShapedType::isDynamic(inputType.getDimSize(1)))
    return std::nullopt;
  Im2colWindow window{input, shape[2], shape[3], shape[4], shift[0], shift[1], shift[2]};
  int64_t offsets = window.windowRows * window.windowColumns;
  if (window.stride == 1)
    return offsets <= 25 ? std::optional(window) : std::nullopt;
  // At stride 2 a static image, its offsets 32-bit lanes.
  ArrayRef<int64_t> image = inputType.getShape().drop_front();
  if (window.stride != 2 || offsets > 49 || llvm::any_of(image, ShapedType::isDynamic) ||
      image[0] * image[1] * image[2] >= (int64_t(1) << 31) || evenRowSegments(shape[6], width) > 4)
    return std::nullopt;
  return window;
}

int64_t evenRowSegments(int64_t outputWidth, int64_t width) {
  if (outputWidth % width == 0)
    return 1;
  return 1 + llvm::divideCeil(width - 1, outputWidth);
}

void findProducer(linalg::GenericOp op, const Roles &roles, int64_t width, Fusion &fusion) {
  // A per-task panel has static rows; a run may give the batch (the outer
  // dimensions) and, for a window read as rows, the columns.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[roles.m]) || ShapedType::isDynamic(ranges[roles.k]))
    return;
  Value b = op.getDpsInputs()[1];
  memref::AllocOp alloc = reshapedAlloc(b);
  if (!alloc)
    return;
  SmallVector<Operation *> accesses = accessesOf(alloc);
  if (accesses.size() != 2)
    return;
  auto producer = dyn_cast<linalg::GenericOp>(accesses[0] == op ? accesses[1] : accesses[0]);
  if (!producer || producer->getBlock() != op->getBlock() || !producer->isBeforeInBlock(op) ||
      !isAllParallel(producer) || producer.getDpsInits()[0] != alloc.getResult() ||
      !producer.getIndexingMapsArray().back().isIdentity())
    return;
  Block &body = producer.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return;
  SmallVector<Value> read;
  for (Value input : producer.getDpsInputs())
    read.push_back(rootOf(input));
  WalkResult walk = body.walk([&](Operation *inner) {
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      read.push_back(rootOf(load.getMemRef()));
      return WalkResult::advance();
    }
    return isMemoryEffectFree(inner) ? WalkResult::advance() : WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return;
  for (Operation *between = producer->getNextNode(); between != op;
       between = between->getNextNode()) {
    if (isInert(between))
      continue;
    auto kernel = dyn_cast<linalg::LinalgOp>(between);
    if (!kernel || !kernel.hasPureBufferSemantics())
      return;
    for (Value init : kernel.getDpsInits())
      if (llvm::is_contained(read, rootOf(init)))
        return;
  }
  std::optional<SmallVector<SmallVector<int64_t>>> groups =
      flatteningGroups(alloc.getType().getShape(), cast<MemRefType>(b.getType()).getShape());
  int64_t reduced = ranges[roles.k];
  if (!groups || reduced * 2 * width * 4 > kMaxPanelBytes)
    return;
  if (ShapedType::isDynamic(ranges[roles.n])) {
    std::optional<Im2colWindow> window = im2colWindow(producer, *groups, width);
    if (!window || window->stride != 1)
      return;
  }
  fusion.producer = producer;
  fusion.groups = std::move(*groups);
}

} // namespace kiln::host
