//===- TensorCoreKernel.cpp - a product as a tensor-core kernel -----------===//

#include "codegen/nvptx/TensorCoreKernel.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::nvptx {

void KernelBuilder::build(gpu::LaunchOp launch) {
  Value tid = launch.getThreadIds().x;
  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value group = div(lane, 4), inGroup = rem(lane, 4);
  Value blockRow = mul(launch.getBlockIds().x, tile);
  Value blockCol = mul(launch.getBlockIds().y, tile);
  // A warp's part of the tile: a quarter (2x2 warps), or with wgmma rows
  // 16w to 16w + 15.
  warpRow = wgmma ? mul(warp, 16) : mul(div(warp, 2), tile / 2);
  warpCol = wgmma ? constant(0) : mul(rem(warp, 2), tile / 2);
  Value rowBase = add(blockRow, warpRow), colBase = add(blockCol, warpCol);
  batchIndex = decompose(launch.getBlockIds().z, p.batch);

  // The rows this thread writes of C (g and g + 8 of each mma tile), and
  // its columns (2t, 2t+1).
  for (int64_t i = 0; i < tilesM; ++i)
    for (int64_t half = 0; half < 2; ++half)
      rows.push_back(
          position(add(rowBase, add(group, constant(16 * i + 8 * half))), p.rows, p.numRows));
  for (int64_t j = 0; j < tilesN; ++j)
    for (int64_t e = 0; e < 2; ++e)
      colsC.push_back(
          position(add(colBase, add(mul(inGroup, 2), constant(8 * j + e))), p.cols, p.numCols));

  // Tiles of A and B in shared memory, a stage of kBlockK along the
  // reduction each, laid out as each operand is in memory.
  Staging stageA = staging(p.a, p.mapA, p.rows, p.numRows, blockRow, tid, tmaA);
  Staging stageB = staging(p.b, p.mapB, p.cols, p.numCols, blockCol, tid, tmaB);
  Value tileA = launch.addWorkgroupAttribution(tileType(stageA), loc);
  Value tileB = launch.addWorkgroupAttribution(tileType(stageB), loc);
  SmallVector<std::pair<Value, const Staging *>> tma;
  for (auto [buffer, of] : {std::pair(tileA, &stageA), std::pair(tileB, &stageB)})
    if (of->tma)
      tma.push_back({buffer, of});
  // Thread 0 issues TMA's copies.
  Value issuer;
  if (!tma.empty()) {
    issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, constant(0));
    initBarriers(launch, issuer, tma);
  }

  // The accumulators start from C (over both scales for fp8, whose
  // products are of unscaled E4M3 values).
  float scale = p.scaleA * p.scaleB;
  SmallVector<Value> init;
  for (int64_t i = 0; i < tilesM; ++i)
    for (int64_t j = 0; j < tilesN; ++j)
      for (int64_t r = 0; r < 4; ++r)
        init.push_back(scaled(loadC(i, j, r), 1.0f / scale));

  // A pipeline of `stages` stages: while the warps multiply one, the
  // next ones are on their way (cp.async, or loads and stores for
  // computed operands), one group of copies each. The stages after the
  // last read zeros past the reduction.
  int64_t blocks = llvm::divideCeil(p.ranges[p.k], kBlockK);
  Value first;
  for (int64_t ahead = 0; ahead + 1 < stages; ++ahead) {
    copyTiles(tma, issuer, constant(ahead), constant(ahead * kBlockK));
    stage(tileA, stageA, constant(ahead), constant(ahead * kBlockK));
    stage(tileB, stageB, constant(ahead), constant(ahead * kBlockK));
    Value group = commit();
    first = first ? first : group;
  }
  auto loop = scf::ForOp::create(b, loc, constant(0), constant(blocks), constant(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value block = loop.getInductionVar();
    Value ahead = add(block, constant(stages - 1));
    Value aheadBuffer = rem(ahead, stages), buffer = rem(block, stages);
    copyTiles(tma, issuer, aheadBuffer, mul(ahead, kBlockK));
    stage(tileA, stageA, aheadBuffer, mul(ahead, kBlockK));
    stage(tileB, stageB, aheadBuffer, mul(ahead, kBlockK));
    // This stage's copies have landed (only the later stages' may be in
    // flight), and every thread's are visible: to wgmma too, which reads
    // shared memory through the async proxy.
    if (Value copied = commit())
      nvgpu::DeviceAsyncWaitOp::create(b, loc, copied,
                                       /*numGroups=*/b.getI32IntegerAttr(stages - 1));
    // TMA's copies into this stage have landed: the n-th use of its
    // barrier completes its phase n.
    if (!tma.empty())
      waitBarrier(buffer, rem(div(block, stages), 2));
    if (wgmma)
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
          NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    if (wgmma)
      acc = multiplyWarpgroup(tileA, stageA, tileB, stageB, buffer, acc);
    else
      multiplyWarps(tileA, stageA, tileB, stageB, buffer, group, inGroup, acc);
    // Every warp is done with this buffer before the next iteration
    // fills it again.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  // The stages past the end (zeros) land before the threads exit.
  if (first)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, first, /*numGroups=*/b.getI32IntegerAttr(0));
  for (int64_t i = 0; i < tilesM; ++i)
    for (int64_t j = 0; j < tilesN; ++j)
      for (int64_t r = 0; r < 4; ++r)
        storeC(i, j, r, scaled(loop.getResult((i * tilesN + j) * 4 + r), scale));
  gpu::TerminatorOp::create(b, loc);
}

Value KernelBuilder::scaled(Value value, float scale) {
  if (scale == 1.0f)
    return value;
  Value factor = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(scale));
  return arith::MulFOp::create(b, loc, value, factor);
}

SmallVector<std::pair<unsigned, Value>> KernelBuilder::decompose(Value flat,
                                                                 ArrayRef<unsigned> loops) {
  SmallVector<int64_t> extents;
  for (unsigned loop : loops)
    extents.push_back(p.ranges[loop]);
  SmallVector<std::pair<unsigned, Value>> indices;
  for (auto [loop, index] : llvm::zip(loops, delinearize(b, loc, flat, extents)))
    indices.push_back({loop, index});
  return indices;
}

KernelBuilder::Position KernelBuilder::position(Value flat, ArrayRef<unsigned> loops, int64_t total,
                                                std::optional<int64_t> last) {
  Value valid = lessThan(flat, total);
  Value clamped = arith::MinUIOp::create(b, loc, flat, constant(last.value_or(total - 1)));
  return {decompose(clamped, loops), valid};
}

SmallVector<Value> KernelBuilder::indicesOf(AffineMap map,
                                            ArrayRef<std::pair<unsigned, Value>> known) {
  SmallVector<Value> indices;
  for (AffineExpr result : map.getResults()) {
    Value index = constant(0);
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      for (auto [loop, value] : known)
        if (loop == dim.getPosition())
          index = value;
    indices.push_back(index);
  }
  return indices;
}

std::pair<const KernelBuilder::Position &, const KernelBuilder::Position &>
KernelBuilder::placeOfC(int64_t i, int64_t j, int64_t r) {
  return {rows[i * 2 + r / 2], colsC[j * 2 + r % 2]};
}

SmallVector<Value> KernelBuilder::indicesOfC(const Position &row, const Position &col) {
  SmallVector<std::pair<unsigned, Value>> known(batchIndex);
  known.append(row.dims);
  known.append(col.dims);
  return indicesOf(p.mapC, known);
}

Value KernelBuilder::loadC(int64_t i, int64_t j, int64_t r) {
  auto [row, col] = placeOfC(i, j, r);
  return read(p.c, indicesOfC(row, col));
}

void KernelBuilder::storeC(int64_t i, int64_t j, int64_t r, Value value) {
  auto [row, col] = placeOfC(i, j, r);
  auto inside = scf::IfOp::create(b, loc, both(row.valid, col.valid), /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inside.thenBlock());
  SmallVector<Value> at = indicesOfC(row, col);
  linalg::GenericOp epilogue = fusion.epilogue;
  if (!epilogue) {
    memref::StoreOp::create(b, loc, value, p.c, at);
    return;
  }
  SmallVector<Value> inAlloc = reshapes.toAlloc(p.c, at);
  // The epilogue reads C (each time by identity) and writes its output by
  // identity: its loop indices are C's, through each one's reshapes.
  SmallVector<Value> loops;
  llvm::DenseMap<unsigned, Value> known;
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (rootOf(input->get()) == rootOf(p.c)) {
      if (loops.empty())
        loops = reshapes.fromAlloc(input->get(), inAlloc);
      known[input->getOperandNumber()] = value;
    }
  memref::StoreOp::create(b, loc, compute(epilogue, loops, known), epilogue.getDpsInits()[0],
                          loops);
}

Value KernelBuilder::read(Value buffer, ValueRange indices) {
  memref::AllocOp alloc = reshapedAlloc(buffer);
  Operation *writer = alloc ? fusion.writers.lookup(alloc.getResult()) : nullptr;
  if (!writer)
    return memref::LoadOp::create(b, loc, buffer, indices);
  if (auto fill = dyn_cast<linalg::FillOp>(writer))
    return fill.getInputs()[0];
  if (auto transpose = dyn_cast<linalg::TransposeOp>(writer)) {
    // Output dimension d is input dimension perm[d].
    SmallVector<Value> inAlloc = reshapes.toAlloc(buffer, indices);
    SmallVector<Value> at(inAlloc.size());
    for (auto [d, from] : llvm::enumerate(transpose.getPermutation()))
      at[from] = inAlloc[d];
    return read(transpose.getInput(), at);
  }
  return compute(cast<linalg::GenericOp>(writer), reshapes.toAlloc(buffer, indices),
                 llvm::DenseMap<unsigned, Value>());
}

Value KernelBuilder::compute(linalg::GenericOp op, ValueRange loops,
                             const llvm::DenseMap<unsigned, Value> &known) {
  Block &body = op.getRegion().front();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    unsigned number = input->getOperandNumber();
    BlockArgument argument = body.getArgument(number);
    if (Value value = known.lookup(number))
      mapping.map(argument, value);
    else if (!argument.use_empty())
      mapping.map(argument,
                  read(input->get(), indicesAt(b, loc, op.getMatchingIndexingMap(input), loops)));
  }
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), loops[index.getDim()]);
    } else if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      SmallVector<Value> at;
      for (Value index : load.getIndices())
        at.push_back(mapping.lookupOrDefault(index));
      mapping.map(load.getResult(), read(load.getMemRef(), at));
    } else {
      b.clone(inner, mapping);
    }
  }
  return mapping.lookupOrDefault(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}

} // namespace kiln::nvptx
