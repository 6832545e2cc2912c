// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MatrixCoreKernel.cpp - a product as an MFMA kernel -----------------===//

#include "codegen/amdgpu/MatrixCoreKernel.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::amdgpu {

std::optional<Format> formatFor(MLIRContext *context, Precision precision, bool xf32,
                                std::optional<Precision> fp8) {
  Builder b(context);
  switch (precision) {
  case Precision::FP32:
    return Format{precision, 4, b.getF32Type(), false};
  case Precision::TF32:
    return xf32 ? Format{precision, 8, b.getF32Type(), true}
                : Format{precision, 4, b.getF32Type(), false};
  case Precision::FP16:
    return Format{precision, 16, b.getF16Type(), false};
  case Precision::BF16:
    return Format{precision, 16, b.getBF16Type(), false};
  case Precision::FP8:
  case Precision::FP8FNUZ:
    if (precision != fp8)
      return std::nullopt;
    return Format{precision, 32,
                  precision == Precision::FP8 ? Type(b.getType<Float8E4M3FNType>())
                                              : Type(b.getType<Float8E4M3FNUZType>()),
                  false};
  }
  return std::nullopt;
}

KernelBuilder::Staging KernelBuilder::staging(Value memref, AffineMap map, float scale,
                                              ArrayRef<unsigned> loops, OpFoldResult total,
                                              Value blockBase) {
  Staging s{memref, map, scale, {}};
  Value first = add(blockBase, div(threadId, kBlockK));
  for (int64_t row = 0; row < tile; row += kStagedRows)
    s.rows.push_back(position(add(first, constant(row)), loops, total));
  return s;
}

void KernelBuilder::stage(Value tileBuffer, const Staging &s, Value k0) {
  int64_t depth = p.ranges[p.k];
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value kInStage = rem(threadId, kBlockK), k = add(k0, kInStage);
  Value kValid = lessThan(k, depth);
  Value kClamped = arith::MinUIOp::create(b, loc, k, constant(depth - 1));
  for (auto [n, row] : llvm::enumerate(s.rows)) {
    SmallVector<std::pair<unsigned, Value>> known(batchIndex);
    known.append(row.dims);
    known.push_back({p.k, kClamped});
    Value element = scaled(read(s.memref, indicesOf(s.map, known)), 1.0f / s.scale);
    element = arith::SelectOp::create(b, loc, both(row.valid, kValid), element, zero);
    Value rowInTile = add(div(threadId, kBlockK), constant(int64_t(n) * kStagedRows));
    memref::StoreOp::create(b, loc, element, tileBuffer, ValueRange{rowInTile, kInStage});
  }
}

Value KernelBuilder::fragment(Value tileBuffer, Value row, int64_t k) {
  int64_t perLane = f.perLane();
  Value rowInTile = add(row, rem(lane, kMfma));
  Value kFirst = add(mul(div(lane, kMfma), perLane), constant(k));
  SmallVector<Value> elements;
  for (int64_t e = 0; e < perLane; ++e)
    elements.push_back(memref::LoadOp::create(b, loc, tileBuffer,
                                              ValueRange{rowInTile, add(kFirst, constant(e))}));
  Value values = perLane == 1 ? elements.front()
                              : vector::FromElementsOp::create(
                                    b, loc, VectorType::get({perLane}, b.getF32Type()), elements)
                                    .getResult();
  // The values are rounded to the format already: converting them is
  // exact (a pair of 8-bit ones at a time).
  if (f.element.isF32())
    return values;
  Type type = perLane == 1 ? f.element : VectorType::get({perLane}, f.element);
  return arith::TruncFOp::create(b, loc, type, values);
}

void KernelBuilder::build(gpu::LaunchOp launch) {
  threadId = launch.getThreadIds().x;
  Value wave = div(threadId, kWave);
  lane = rem(threadId, kWave);
  Value blockRow = mul(launch.getBlockIds().x, tile);
  Value blockCol = mul(launch.getBlockIds().y, tile);
  // A wavefront's quarter of the tile (2x2 wavefronts).
  waveRow = mul(div(wave, 2), tile / 2);
  waveCol = mul(rem(wave, 2), tile / 2);
  Value rowBase = add(blockRow, waveRow), colBase = add(blockCol, waveCol);
  batchIndex = decompose(launch.getBlockIds().z, p.batch);

  // The rows this lane holds of C (4 (lane / 16) + r of each MFMA tile),
  // and its column (lane % 16).
  Value quad = mul(div(lane, kMfma), 4);
  for (int64_t i = 0; i < tiles; ++i)
    for (int64_t r = 0; r < 4; ++r)
      rowsC.push_back(
          position(add(rowBase, add(quad, constant(kMfma * i + r))), p.rows, p.rowCount));
  for (int64_t j = 0; j < tiles; ++j)
    colsC.push_back(position(add(colBase, add(rem(lane, kMfma), constant(kMfma * j))), p.cols,
                             b.getIndexAttr(p.numCols)));

  // Tiles of A and B in LDS: tile rows of kBlockK f32, each row padded by
  // one so that the 16 lanes reading a column read 16 banks.
  auto tileType =
      MemRefType::get({tile, kBlockK + 1}, b.getF32Type(), MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  Value tileA = launch.addWorkgroupAttribution(tileType, loc);
  Value tileB = launch.addWorkgroupAttribution(tileType, loc);
  Staging stageA = staging(p.a, p.mapA, p.scaleA, p.rows, p.rowCount, blockRow);
  Staging stageB = staging(p.b, p.mapB, p.scaleB, p.cols, b.getIndexAttr(p.numCols), blockCol);

  // The accumulators start from C (over both scales for the 8-bit formats,
  // whose products are of unscaled E4M3 values).
  float scale = p.scaleA * p.scaleB;
  auto accType = VectorType::get({4}, b.getF32Type());
  SmallVector<Value> init;
  for (int64_t i = 0; i < tiles; ++i)
    for (int64_t j = 0; j < tiles; ++j) {
      SmallVector<Value> values;
      for (int64_t r = 0; r < 4; ++r) {
        auto [row, col] = placeOfC(i, j, r);
        values.push_back(scaled(loadC(row, col), 1.0f / scale));
      }
      init.push_back(vector::FromElementsOp::create(b, loc, accType, values));
    }

  int64_t blocks = llvm::divideCeil(p.ranges[p.k], kBlockK);
  auto loop = scf::ForOp::create(b, loc, constant(0), constant(blocks), constant(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 = mul(loop.getInductionVar(), kBlockK);
    stage(tileA, stageA, k0);
    stage(tileB, stageB, k0);
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    for (int64_t k = 0; k < kBlockK; k += f.k) {
      SmallVector<Value> a, bFragments;
      for (int64_t i = 0; i < tiles; ++i)
        a.push_back(fragment(tileA, add(waveRow, constant(kMfma * i)), k));
      for (int64_t j = 0; j < tiles; ++j)
        bFragments.push_back(fragment(tileB, add(waveCol, constant(kMfma * j)), k));
      for (int64_t i = 0; i < tiles; ++i)
        for (int64_t j = 0; j < tiles; ++j) {
          Value &sum = acc[i * tiles + j];
          auto mfma = ::mlir::amdgpu::MFMAOp::create(b, loc, accType, kMfma, kMfma, f.k,
                                                     /*blocks=*/1, a[i], bFragments[j], sum);
          if (f.xf32)
            mfma.setReducePrecision(true);
          sum = mfma.getResult();
        }
    }
    // Every wavefront is done with the tiles before the next stage fills
    // them.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  for (int64_t i = 0; i < tiles; ++i)
    for (int64_t j = 0; j < tiles; ++j)
      for (int64_t r = 0; r < 4; ++r) {
        auto [row, col] = placeOfC(i, j, r);
        Value value = vector::ExtractOp::create(b, loc, loop.getResult(i * tiles + j), r);
        storeC(row, col, scaled(value, scale));
      }
  gpu::TerminatorOp::create(b, loc);
}

} // namespace kiln::amdgpu
