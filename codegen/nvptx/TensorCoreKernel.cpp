// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- TensorCoreKernel.cpp - a product as a tensor-core kernel -----------===//

#include "codegen/nvptx/TensorCoreKernel.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

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
          position(add(rowBase, add(group, constant(16 * i + 8 * half))), p.rows, p.rowCount));
  for (int64_t j = 0; j < tilesN; ++j)
    for (int64_t e = 0; e < 2; ++e)
      colsC.push_back(position(add(colBase, add(mul(inGroup, 2), constant(8 * j + e))), p.cols,
                               b.getIndexAttr(p.numCols)));

  // Tiles of A and B in shared memory, a stage of kBlockK along the
  // reduction each, laid out as each operand is in memory.
  Staging stageA = staging(p.a, p.mapA, p.rows, p.rowCount, blockRow, tid, tmaA);
  Staging stageB = staging(p.b, p.mapB, p.cols, b.getIndexAttr(p.numCols), blockCol, tid, tmaB);
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
        init.push_back(scaled(loadMmaC(i, j, r), 1.0f / scale));

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
        storeMmaC(i, j, r, scaled(loop.getResult((i * tilesN + j) * 4 + r), scale));
  gpu::TerminatorOp::create(b, loc);
}

std::pair<const KernelBuilder::Position &, const KernelBuilder::Position &>
KernelBuilder::placeOfC(int64_t i, int64_t j, int64_t r) {
  return {rows[i * 2 + r / 2], colsC[j * 2 + r % 2]};
}

Value KernelBuilder::loadMmaC(int64_t i, int64_t j, int64_t r) {
  auto [row, col] = placeOfC(i, j, r);
  return loadC(row, col);
}

void KernelBuilder::storeMmaC(int64_t i, int64_t j, int64_t r, Value value) {
  auto [row, col] = placeOfC(i, j, r);
  storeC(row, col, value);
}

} // namespace kiln::nvptx
