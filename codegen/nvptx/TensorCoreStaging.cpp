// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- TensorCoreStaging.cpp - tiles into shared memory -------------------===//

#include "codegen/nvptx/TensorCoreKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::nvptx {

namespace {

/// The stride (in `strides`, a memref's) of the dimension `map` indexes by
/// `loop`, if any does.
std::optional<int64_t> loopStride(ArrayRef<int64_t> strides, AffineMap map, unsigned loop) {
  for (auto [result, expr] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(expr); dim && dim.getPosition() == loop)
      return strides[result];
  return std::nullopt;
}

/// Whether every stride of `type` (strided, `strides` its strides) is 1 or
/// a multiple of `run`: a dynamic one too where the layout is the identity,
/// whose stride is then a multiple of the static sizes inside it.
bool stridesAligned(MemRefType type, ArrayRef<int64_t> strides, int64_t run) {
  for (auto [d, stride] : llvm::enumerate(strides)) {
    if (!ShapedType::isDynamic(stride)) {
      if (stride != 1 && stride % run != 0)
        return false;
      continue;
    }
    if (!type.getLayout().isIdentity())
      return false;
    int64_t inside = 1;
    for (int64_t size : type.getShape().drop_front(d + 1))
      inside *= ShapedType::isDynamic(size) ? 1 : size;
    if (inside % run != 0)
      return false;
  }
  return true;
}

} // namespace

std::optional<TmaView> tmaView(const Product &p, Value memref, AffineMap map,
                               ArrayRef<unsigned> loops) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.getElementType().isF32() || failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % 4 != 0)
    return std::nullopt;
  // A tensor map's sizes are fixed when it is encoded.
  auto dynamic = [&](unsigned loop) { return ShapedType::isDynamic(p.ranges[loop]); };
  if (llvm::any_of(loops, dynamic) || llvm::any_of(p.batch, dynamic))
    return std::nullopt;
  auto strideOf = [&](unsigned loop) { return loopStride(strides, map, loop); };
  auto aligned = [](int64_t stride) { return !ShapedType::isDynamic(stride) && stride % 4 == 0; };
  if (strideOf(p.k) != 1)
    return std::nullopt;
  TmaView view;
  view.dims = {p.ranges[p.k], 1};
  // With no row of more than one element, any aligned stride will do.
  int64_t rowStride = llvm::alignTo(p.ranges[p.k], 4), next = 0;
  for (unsigned loop : llvm::reverse(loops)) {
    std::optional<int64_t> stride = strideOf(loop);
    if (!stride)
      return std::nullopt;
    if (p.ranges[loop] == 1)
      continue;
    if (view.dims[1] == 1)
      rowStride = *stride;
    else if (*stride != next)
      return std::nullopt;
    next = *stride * p.ranges[loop];
    view.dims[1] *= p.ranges[loop];
  }
  if (!aligned(rowStride))
    return std::nullopt;
  view.strides = {rowStride};
  for (unsigned loop : llvm::reverse(p.batch)) {
    std::optional<int64_t> stride = strideOf(loop);
    if (p.ranges[loop] == 1)
      continue;
    if (!stride || !aligned(*stride))
      return std::nullopt;
    view.dims.push_back(p.ranges[loop]);
    view.strides.push_back(*stride);
    view.batch.push_back(loop);
  }
  if (view.dims.size() > 5)
    return std::nullopt;
  return view;
}

Type KernelBuilder::tileElement() {
  if (!wgmma || f.bits == 32)
    return b.getF32Type();
  return b.getIntegerType(f.bits);
}

MemRefType KernelBuilder::tileType(const Staging &s) {
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  // TMA's stages as bytes, with room to start them at the swizzle's
  // alignment (shared memory gives 16).
  if (s.tma)
    return MemRefType::get({stages * tmaStageBytes() + kSwizzleAtomBytes - 16}, b.getI8Type(),
                           MemRefLayoutAttrInterface(), workgroup);
  // For wgmma, core matrices: [stage][row / 8][k / coreRow][row % 8][k %
  // coreRow]. Otherwise as the operand is in memory; padding makes the
  // fragment reads of a warp hit 32 banks (tf32).
  SmallVector<int64_t> shape = wgmma
                                   ? SmallVector<int64_t>{stages, tile / kCoreRows,
                                                          kBlockK / coreRow(), kCoreRows, coreRow()}
                               : s.alongK ? SmallVector<int64_t>{stages, tile, kBlockK + 4}
                                          : SmallVector<int64_t>{stages, kBlockK, tile + 8};
  return MemRefType::get(shape, tileElement(), MemRefLayoutAttrInterface(), workgroup);
}

KernelBuilder::Staging KernelBuilder::staging(Value memref, AffineMap map, ArrayRef<unsigned> loops,
                                              OpFoldResult total, Value blockBase, Value tid,
                                              const std::optional<TmaOperand> &tma) {
  Staging s;
  s.memref = memref;
  s.map = map;
  if (tma) {
    s.tma = true;
    s.tensorMap = tma->map;
    s.mapBatch = tma->view.batch;
    s.blockBase = blockBase;
    return s;
  }
  memref::AllocOp alloc = reshapedAlloc(memref);
  s.computed = alloc && fusion.writers.count(alloc.getResult());
  s.scale = memref == p.a ? p.scaleA : p.scaleB;
  // The memref dimensions the reduction and the innermost row loop index.
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  std::optional<int64_t> kStride, rowStride;
  bool strided = succeeded(type.getStridesAndOffset(strides, offset));
  if (strided) {
    kStride = loopStride(strides, map, p.k);
    if (!loops.empty())
      rowStride = loopStride(strides, map, loops.back());
  }
  // (A stride given at run time is a large one.)
  auto magnitude = [](int64_t stride) {
    return ShapedType::isDynamic(stride) ? std::numeric_limits<int64_t>::max() : stride;
  };
  s.alongK = !kStride || !rowStride || magnitude(*kStride) <= magnitude(*rowStride);
  s.converted = wgmma && f.bits != 32 && !s.computed;
  // 16 bytes at once need 16-byte aligned runs in memory: the run's
  // direction contiguous, every other stride and the offset multiples of
  // a run, and the extent along it too (runs never straddle its end).
  // A run of rows given at run time may straddle their end.
  int64_t extent = s.alongK ? p.ranges[p.k] : loops.empty() ? 1 : p.ranges[loops.back()];
  // (wgmma's tiles keep the reduction contiguous.)
  s.vector = !s.computed && !s.converted && (s.alongK || !wgmma) && strided &&
             (s.alongK ? kStride : rowStride) == 1 && !ShapedType::isDynamic(offset) &&
             offset % kRun == 0 && !ShapedType::isDynamic(extent) && extent % kRun == 0 &&
             stridesAligned(type, strides, kRun);
  int64_t runs = tile * kBlockK / kThreads / kRun;
  if (s.alongK) {
    // Thread t: columns 4(t % 8) to 4(t % 8) + 3 of rows t / 8 + 16j.
    // With wgmma, 8 neighbouring threads write a core matrix's 8 rows
    // instead (one 128-byte line, no bank conflicts): columns 4((t / 8)
    // % 8) on of rows t % 8 + 8(t / 64) + 16j.
    Value kStart = mul(rem(wgmma ? div(tid, kCoreRows) : tid, kBlockK / kRun), kRun);
    Value firstRow = wgmma ? add(rem(tid, kCoreRows), mul(div(tid, kThreads / 2), kCoreRows))
                           : div(tid, kBlockK / kRun);
    for (int64_t j = 0; j < runs; ++j) {
      Value row = add(firstRow, constant(kThreads * kRun / kBlockK * j));
      s.rowStarts.push_back(row);
      s.kStarts.push_back(kStart);
      s.positions.push_back(position(add(blockBase, row), loops, total));
    }
  } else {
    // Thread t: rows 4(t % 16) to 4(t % 16) + 3 of columns t / 16 + 8j.
    Value rowStart = mul(rem(tid, tile / kRun), kRun);
    for (int64_t j = 0; j < runs; ++j) {
      s.rowStarts.push_back(rowStart);
      s.kStarts.push_back(add(div(tid, tile / kRun), constant(kThreads * kRun / tile * j)));
    }
    // A run of rows is one copy from its first, whose address must stay
    // aligned when clamped.
    if (s.vector)
      s.positions.push_back(position(add(blockBase, rowStart), loops, total, kRun));
    else
      for (int64_t e = 0; e < kRun; ++e)
        s.positions.push_back(position(add(blockBase, add(rowStart, constant(e))), loops, total));
  }
  return s;
}

SmallVector<Value> KernelBuilder::inTile(const Staging &s, Value buffer, Value row, Value k) {
  if (wgmma)
    return {buffer, div(row, kCoreRows), div(k, coreRow()), rem(row, kCoreRows), rem(k, coreRow())};
  return s.alongK ? SmallVector<Value>{buffer, row, k} : SmallVector<Value>{buffer, k, row};
}

void KernelBuilder::stage(Value tile, const Staging &s, Value buffer, Value k0) {
  if (s.tma)
    return; // copyTiles
  int64_t depth = p.ranges[p.k];
  auto token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // The operand's indices at `row` and reduction index `k` (clamped to
  // `last`), and whether they are inside it.
  auto source = [&](const Position &row, Value k, int64_t last) {
    SmallVector<std::pair<unsigned, Value>> known(batchIndex);
    known.append(row.dims);
    known.push_back({p.k, arith::MinUIOp::create(b, loc, k, constant(last))});
    return std::make_pair(indicesOf(s.map, known), both(row.valid, lessThan(k, depth)));
  };
  for (auto [j, rowStart, kStart] : llvm::enumerate(s.rowStarts, s.kStarts)) {
    if (s.vector) {
      // A whole run or nothing (the extent along it is a multiple of the
      // run): its first element's place, the last run-aligned one at most.
      Value k = add(k0, kStart);
      auto [at, valid] =
          source(s.positions[s.alongK ? j : 0], k, s.alongK ? depth - kRun : depth - 1);
      Value count = arith::SelectOp::create(b, loc, valid, constant(kRun), constant(0));
      copies.push_back(
          nvgpu::DeviceAsyncCopyOp::create(b, loc, token, tile, inTile(s, buffer, rowStart, kStart),
                                           s.memref, at, b.getIndexAttr(kRun), count, UnitAttr()));
      continue;
    }
    for (int64_t e = 0; e < kRun; ++e) {
      Value row = s.alongK ? rowStart : add(rowStart, constant(e));
      Value column = s.alongK ? add(kStart, constant(e)) : kStart;
      auto [at, valid] = source(s.positions[s.alongK ? j : e], add(k0, column), depth - 1);
      SmallVector<Value> into = inTile(s, buffer, row, column);
      if (s.computed || s.converted) {
        Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
        Value value = arith::SelectOp::create(b, loc, valid, read(s.memref, at), zero);
        if (wgmma && f.bits != 32)
          value = inFormat(scaled(value, 1.0f / s.scale));
        memref::StoreOp::create(b, loc, value, tile, into);
        continue;
      }
      // cp.async reads the clamped element, or nothing (a zero) outside.
      Value count = arith::SelectOp::create(b, loc, valid, constant(1), constant(0));
      copies.push_back(nvgpu::DeviceAsyncCopyOp::create(b, loc, token, tile, into, s.memref, at,
                                                        b.getIndexAttr(1), count, UnitAttr()));
    }
  }
}

void KernelBuilder::ptx(StringRef text, StringRef constraints, ValueRange operands) {
  LLVM::InlineAsmOp::create(b, loc, TypeRange(), operands, text, constraints,
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                            ArrayAttr());
}

Value KernelBuilder::sharedAddress(Value buffer) {
  return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
}

Value KernelBuilder::tmaBase(Value tile) {
  Value address = add(sharedAddress(tile), constant(kSwizzleAtomBytes - 1));
  return arith::AndIOp::create(b, loc, address, constant(-kSwizzleAtomBytes));
}

void KernelBuilder::initBarriers(gpu::LaunchOp launch, Value issuer,
                                 ArrayRef<std::pair<Value, const Staging *>> tma) {
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  barriers = launch.addWorkgroupAttribution(
      MemRefType::get({stages}, b.getI64Type(), MemRefLayoutAttrInterface(), workgroup), loc);
  auto first = scf::IfOp::create(b, loc, issuer, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
    for (int64_t stage = 0; stage < stages; ++stage)
      ptx("mbarrier.init.shared::cta.b64 [$0], $1;", "r,r", {barrier(constant(stage)), one});
    ptx("fence.mbarrier_init.release.cluster;", "", {});
    for (const auto &operand : tma)
      ptx("fence.proxy.tensormap::generic.acquire.sys [$0], 128;", "l",
          {operand.second->tensorMap});
  }
  gpu::BarrierOp::create(b, loc);
}

void KernelBuilder::copyTiles(ArrayRef<std::pair<Value, const Staging *>> tma, Value issuer,
                              Value buffer, Value k0) {
  if (tma.empty())
    return;
  auto copying = scf::IfOp::create(b, loc, both(issuer, lessThan(k0, p.ranges[p.k])),
                                   /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(copying.thenBlock());
  Value bar = barrier(buffer);
  Value bytes =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), int64_t(tma.size()) * tmaStageBytes());
  ptx("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r", {bar, bytes});
  for (auto [into, s] : tma) {
    // The box's coordinates, innermost first: reduction, row, batch.
    SmallVector<Value> operands = {i32(add(tmaBase(into), mul(buffer, tmaStageBytes()))),
                                   s->tensorMap, i32(k0), i32(s->blockBase)};
    for (unsigned loop : s->mapBatch)
      for (auto [known, index] : batchIndex)
        if (known == loop)
          operands.push_back(i32(index));
    operands.push_back(bar);
    size_t rank = operands.size() - 3;
    std::string coordinates, constraints = "r,l";
    for (size_t d = 0; d < rank; ++d) {
      coordinates += (d ? ", $" : "$") + std::to_string(2 + d);
      constraints += ",r";
    }
    constraints += ",r";
    ptx("cp.async.bulk.tensor." + std::to_string(rank) +
            "d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {" + coordinates +
            "}], [$" + std::to_string(2 + rank) + "];",
        constraints, operands);
  }
}

void KernelBuilder::waitBarrier(Value buffer, Value parity) {
  ptx("{\n.reg .pred done;\nwait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
      "@!done bra wait;\n}",
      "r,r", {barrier(buffer), i32(parity)});
}

Value KernelBuilder::commit() {
  if (copies.empty())
    return {};
  SmallVector<Value> tokens;
  for (nvgpu::DeviceAsyncCopyOp copy : copies)
    tokens.push_back(copy.getAsyncToken());
  copies.clear();
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

} // namespace kiln::nvptx
