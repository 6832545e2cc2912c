// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- SharedTransposes.cpp - transposes through shared memory ------------===//
//
// A transpose that changes the innermost dimension reads along one
// dimension and writes along another: mapped one element a thread, either
// its reads or its writes are a stride apart, and a warp touches 32 memory
// segments where it could touch one. Here each such transpose becomes a
// launch that moves a tile of the plane of those two dimensions a block:
// the threads read the tile along the input's innermost dimension into
// shared memory, wait for one another, and write it along the output's.
// Both sides are then contiguous runs. The tile's rows have one element of
// padding, so that the column reads of the second half fall in different
// banks.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {

#define GEN_PASS_DEF_SHAREDTRANSPOSES
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

constexpr int64_t kTile = 32, kThreads = 256;

/// The two dimensions a transpose exchanges the roles of: `across`, the
/// input dimension that becomes the output's innermost, and the input's
/// innermost, with their tile sizes.
struct Plane {
  int64_t across, acrossTile, innerTile;
};

std::optional<Plane> planeOf(linalg::TransposeOp op) {
  auto input = dyn_cast<MemRefType>(op.getInput().getType());
  ArrayRef<int64_t> perm = op.getPermutation();
  if (!op.hasPureBufferSemantics() || !input || !input.hasStaticShape() || perm.size() < 2)
    return std::nullopt;
  int64_t inner = int64_t(perm.size()) - 1;
  int64_t across = perm.back();
  // Unit dimensions move nothing: such a transpose is a copy in disguise.
  if (across == inner || input.getDimSize(across) == 1 || input.getDimSize(inner) == 1)
    return std::nullopt;
  return Plane{across, std::min(kTile, input.getDimSize(across)),
               std::min(kTile, input.getDimSize(inner))};
}

void toSharedMemory(linalg::TransposeOp op, const Plane &plane) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  IndexArithmetic build(b, loc);
  Value input = op.getInput(), output = op.getInit();
  auto type = cast<MemRefType>(input.getType());
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t inner = type.getRank() - 1;
  int64_t acrossExtent = shape[plane.across], innerExtent = shape[inner];

  // One block a tile: the blocks enumerate the other dimensions, then the
  // tiles across, then the tiles along the innermost.
  SmallVector<int64_t> blocks;
  for (int64_t d = 0; d < inner; ++d)
    blocks.push_back(d == plane.across ? llvm::divideCeil(acrossExtent, plane.acrossTile)
                                       : shape[d]);
  blocks.push_back(llvm::divideCeil(innerExtent, plane.innerTile));
  int64_t count = 1;
  for (int64_t extent : blocks)
    count *= extent;
  Value one = build.constant(1);
  auto launch = gpu::LaunchOp::create(b, loc, build.constant(count), one, one,
                                      build.constant(kThreads), one, one);
  launch->setAttr(kKernelAttr, b.getStringAttr("transpose"));
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value tile = launch.addWorkgroupAttribution(
      MemRefType::get({plane.acrossTile, plane.innerTile + 1}, type.getElementType(),
                      MemRefLayoutAttrInterface(), workgroup),
      loc);
  b.setInsertionPointToStart(&launch.getBody().front());

  // The input's indices of the tile's first element; the tile's position
  // in it comes later.
  SmallVector<Value> at = delinearize(b, loc, launch.getBlockIds().x, blocks);
  Value acrossStart = build.mul(at[plane.across], plane.acrossTile);
  Value innerStart = build.mul(at[inner], plane.innerTile);
  auto inRange = [&](Value row, Value column) {
    return build.both(build.lessThan(build.add(acrossStart, row), acrossExtent),
                      build.lessThan(build.add(innerStart, column), innerExtent));
  };
  auto inputAt = [&](Value row, Value column) {
    SmallVector<Value> indices(at);
    indices[plane.across] = build.add(acrossStart, row);
    indices[inner] = build.add(innerStart, column);
    return indices;
  };
  Value thread = launch.getThreadIds().x;
  int64_t elements = plane.acrossTile * plane.innerTile;

  // `move` once for each element of the tile in range, at its row and
  // column: thread t takes element t, then every 256th. Numbered along the
  // input's innermost dimension (`alongInput`), consecutive threads take
  // consecutive columns; else consecutive rows, which run along the
  // output's innermost dimension.
  auto forEach = [&](bool alongInput, function_ref<void(Value, Value)> move) {
    auto loop =
        scf::ForOp::create(b, loc, thread, build.constant(elements), build.constant(kThreads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value e = loop.getInductionVar();
    Value row = alongInput ? build.div(e, plane.innerTile) : build.rem(e, plane.acrossTile);
    Value column = alongInput ? build.rem(e, plane.innerTile) : build.div(e, plane.acrossTile);
    auto inside = scf::IfOp::create(b, loc, inRange(row, column), /*withElseRegion=*/false);
    b.setInsertionPointToStart(inside.thenBlock());
    move(row, column);
  };
  forEach(/*alongInput=*/true, [&](Value row, Value column) {
    Value value = memref::LoadOp::create(b, loc, input, inputAt(row, column));
    memref::StoreOp::create(b, loc, value, tile, ValueRange{row, column});
  });
  gpu::BarrierOp::create(b, loc);
  forEach(/*alongInput=*/false, [&](Value row, Value column) {
    Value value = memref::LoadOp::create(b, loc, tile, ValueRange{row, column});
    SmallVector<Value> source = inputAt(row, column), indices;
    for (int64_t d : perm)
      indices.push_back(source[d]);
    memref::StoreOp::create(b, loc, value, output, indices);
  });
  gpu::TerminatorOp::create(b, loc);
  op.erase();
}

struct SharedTransposes : impl::SharedTransposesBase<SharedTransposes> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::TransposeOp, Plane>> transposes;
    for (auto op : getOperation().getOps<linalg::TransposeOp>())
      if (std::optional<Plane> plane = planeOf(op))
        transposes.push_back({op, *plane});
    for (auto &[op, plane] : transposes)
      toSharedMemory(op, plane);
  }
};

} // namespace
} // namespace kiln
