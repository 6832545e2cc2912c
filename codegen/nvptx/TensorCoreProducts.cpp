//===- TensorCoreProducts.cpp - products as tensor-core kernels -----------===//
//
// Each product (a linalg contraction on buffers: C += A * B over batch, row,
// column and one reduction loop) that reads tf32, fp16 or bf16 (or fp8 on
// sm_89 and later) becomes a gpu.launch whose warps multiply on NVIDIA
// tensor cores with mma.sync:
//
//   - a block of 4 warps computes a 64x64 tile of C; each warp 32x32, as
//     2x4 mma tiles of 16x8, accumulating in fp32 registers (32x32 tiles,
//     1x2 a warp, for products that would launch few blocks);
//   - the reduction advances 32 at a time through stages of A's and B's
//     tiles in shared memory (four for 32x32 tiles, two for 64x64): while
//     the warps multiply one (8, 16 or 32 at a time, each thread reading
//     its fragments as the PTX ISA lays them out), the block's threads
//     fetch the next ones with cp.async, zeros past the edges (see
//     `Staging`);
//   - C is read first (it holds the product's initial value) and written
//     once at the end, within bounds.
//
// The launch takes in the kernels around the product (see `Fusion`): the
// writers of its operands run where their elements are staged, and the
// elementwise kernel after it on the accumulators before the store. This
// runs on buffers before memory is planned, so that the buffers those
// kernels wrote take no memory.
//
// On sm_90a (`wgmma`) the 4 warps are one warpgroup, and `wgmma.mma_async`
// multiplies the whole 64x64 tile from shared memory, where the tiles are
// laid out as its core matrices (see `Staging`); each warp's accumulators
// are then 16 rows of the tile, in mma.sync's layout 8 times over. A tf32
// operand copied as it is, in a layout TMA can map (see `tmaView`), comes
// through the Tensor Memory Accelerator instead: thread 0 copies a box of
// it a stage (`copyTiles`), swizzled within 128-byte rows, and the threads
// wait on the stage's mbarrier; `kiln.tensor_map` before the launch gives
// the map's address, which the runtime encodes.
//
// The operands hold values already rounded to the format (kiln-assign-
// precision did that), so packing them into registers is exact. An fp8
// operand holds E4M3 values times its scale (kiln.scales): the kernel
// divides the scales out as it packs, and multiplies the accumulators by
// both when it stores them.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"
#include "passes/Buffers.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {

#define GEN_PASS_DEF_TENSORCOREPRODUCTS
#include "codegen/nvptx/Passes.h.inc"

namespace {

using namespace mlir;

/// A block is 4 warps (one warpgroup) computing a square tile of C, as
/// large as A's and B's tiles in shared memory: 64x64 (each warp 32x32,
/// with mma.sync), or 32x32 (each warp 16x16) for products that would
/// launch few blocks of 64x64: BERT's at batch 1 (64 rows) would launch 12
/// of them on a GPU of 132 SMs, and get 48 of 32x32. wgmma multiplies 64
/// rows a warpgroup, so its tiles are 64x64 always.
constexpr int64_t kThreads = 128;
constexpr int64_t kLargeTile = 64, kSmallTile = 32;
/// Fewer blocks of 64x64 than this take 32x32 ones: about an H100's or
/// H200's SMs, so that each gets a block before any gets two.
constexpr int64_t kFewBlocks = 128;
/// The reduction a pipeline stage covers.
constexpr int64_t kBlockK = 32;
/// The stages of the pipeline: four for 32x32 tiles (at most 38 KiB of
/// shared memory), whose stages are short, so that three are in flight
/// while the warps multiply the fourth; two for 64x64 (36 KiB, and 32 for
/// wgmma), where a third would pass the 48 KiB a block may hold
/// statically. (Three small stages would do as well, but the remainder by
/// 3 that picks a stage's buffer led ptxas to give BERT's products 254
/// registers where they take 60; four is a mask.)
constexpr int64_t kSmallTileStages = 4, kStages = 2;

/// The loops of a product by role, outermost first.
struct Product {
  linalg::GenericOp op;
  SmallVector<unsigned> batch, rows, cols;
  unsigned k;
  SmallVector<int64_t> ranges;
  int64_t numBatch = 1, numRows = 1, numCols = 1;
  Value a, b, c;
  AffineMap mapA, mapB, mapC;
  float scaleA = 1.0f, scaleB = 1.0f;
};

/// The product `op` computes, when it is one a kernel here can take.
std::optional<Product> matchProduct(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics() ||
      !isMultiplyAdd(op))
    return std::nullopt;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return std::nullopt;
  }
  Product product;
  product.op = op;
  product.a = op.getDpsInputs()[0];
  product.b = op.getDpsInputs()[1];
  product.c = op.getDpsInits()[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  product.mapA = maps[0];
  product.mapB = maps[1];
  product.mapC = maps[2];
  if (!llvm::all_of(maps, [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  product.ranges = op.getStaticLoopRanges();
  std::optional<unsigned> k;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d) {
    auto uses = [&](AffineMap map) { return map.isFunctionOfDim(d); };
    bool inA = uses(product.mapA), inB = uses(product.mapB), inC = uses(product.mapC);
    int64_t size = product.ranges[d];
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    if (iterators[d] == utils::IteratorType::reduction) {
      if (!inA || !inB || inC)
        return std::nullopt;
      if (size == 1)
        continue; // always index 0
      if (k)
        return std::nullopt; // one reduction loop only
      k = d;
    } else if (inA && inB && inC) {
      product.batch.push_back(d);
      product.numBatch *= size;
    } else if (inA && inC) {
      product.rows.push_back(d);
      product.numRows *= size;
    } else if (inB && inC) {
      product.cols.push_back(d);
      product.numCols *= size;
    } else if (size != 1) {
      return std::nullopt;
    }
  }
  if (!k)
    return std::nullopt;
  product.k = *k;
  return product;
}

/// The kernels a product's launch takes in.
struct Fusion {
  /// Buffers the launch never reads: it computes each element where it
  /// needs it, with the fill, transpose or generic that wrote the buffer (by
  /// allocation). Writers of A and B (an im2col gather, a rounding, a
  /// transpose) and of C (its initial value), and the writers of what
  /// those read, when only their reader reads them.
  llvm::MapVector<Value, Operation *> writers;
  /// The elementwise kernel after the product that reads C (bias,
  /// activation, residual, rounding): applied to the accumulators, and
  /// its output stored instead of C.
  linalg::GenericOp epilogue;
  /// Where the launch goes: at the epilogue, where what it reads exists.
  Operation *anchor = nullptr;
};

/// The buffers, by root, that `op` (a kernel on buffers) may write.
SmallVector<Value> writtenRoots(Operation *op) {
  SmallVector<Value> roots;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    for (Value init : linalgOp.getDpsInits())
      roots.push_back(rootOf(init));
    return roots;
  }
  op->walk([&](Operation *inner) {
    if (auto store = dyn_cast<memref::StoreOp>(inner))
      roots.push_back(rootOf(store.getMemRef()));
  });
  return roots;
}

/// A generic body the launch can compute at any index: no regions (no
/// loops over windows or rows) and nothing but arithmetic and loads.
bool isComputable(linalg::GenericOp op) {
  if (!isAllParallel(op) || !op.getIndexingMapsArray().back().isIdentity() ||
      !llvm::all_of(op.getIndexingMapsArray(), onlyDimsAndConstants))
    return false;
  Block &body = op.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return false;
  return llvm::all_of(body.without_terminator(), [](Operation &inner) {
    return inner.getNumRegions() == 0 && (isMemoryEffectFree(&inner) || isa<memref::LoadOp>(inner));
  });
}

/// The buffers, by root, `op` (a fill, a transpose or a computable
/// generic) reads.
SmallVector<Value> readRoots(Operation *op) {
  SmallVector<Value> roots;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return {rootOf(transpose.getInput())};
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return roots;
  for (Value input : generic.getDpsInputs())
    roots.push_back(rootOf(input));
  generic.getRegion().walk([&](memref::LoadOp load) { roots.push_back(rootOf(load.getMemRef())); });
  return roots;
}

/// Whether nothing from after `writer` up to `anchor` writes a buffer in
/// `roots`.
bool unchangedUntil(Operation *writer, Operation *anchor, ArrayRef<Value> roots) {
  for (Operation *op = writer->getNextNode(); op != anchor; op = op->getNextNode()) {
    if (isInert(op))
      continue;
    if (!isa<linalg::LinalgOp, gpu::LaunchOp>(op))
      return false;
    if (llvm::any_of(writtenRoots(op), [&](Value root) { return llvm::is_contained(roots, root); }))
      return false;
  }
  return true;
}

/// Records the writer of `buffer` in `fusion` if the launch can compute it
/// in place of reading it: a fill, a transpose or a computable generic
/// writing the whole allocation `buffer` views, before `reader`, the only
/// other op that touches it, with its own inputs unchanged until the
/// launch. Then the same for what that writer reads. With `isC`, ops
/// after the product may touch the buffer too: the launch stores C whole,
/// or the epilogue it takes in was C's last reader.
void fuseWriter(Value buffer, Operation *reader, Fusion &fusion, bool isC = false) {
  memref::AllocOp alloc = reshapedAlloc(buffer);
  if (!alloc || fusion.writers.count(alloc.getResult()))
    return;
  SmallVector<Operation *> accesses = accessesOf(alloc.getResult());
  Operation *writer = nullptr;
  for (Operation *access : accesses) {
    if (auto fill = dyn_cast<linalg::FillOp>(access);
        fill && reshapedAlloc(fill.getOutputs()[0]) == alloc)
      writer = fill;
    else if (auto generic = dyn_cast<linalg::GenericOp>(access);
             generic && generic.getNumDpsInits() == 1 &&
             generic.getDpsInits()[0] == alloc.getResult() && isComputable(generic))
      writer = generic;
    else if (auto transpose = dyn_cast<linalg::TransposeOp>(access);
             transpose && transpose.getInit() == alloc.getResult())
      writer = transpose;
    else if (access != reader && !(isC && reader->isBeforeInBlock(access)))
      return;
  }
  if (!writer || writer->getBlock() != reader->getBlock() || !writer->isBeforeInBlock(reader))
    return;
  for (Operation *between = writer->getNextNode(); between != reader;
       between = between->getNextNode())
    if (llvm::is_contained(accesses, between))
      return;
  SmallVector<Value> reads = readRoots(writer);
  if (!unchangedUntil(writer, fusion.anchor, reads))
    return;
  fusion.writers[alloc.getResult()] = writer;
  for (Value read : reads)
    fuseWriter(read, writer, fusion);
}

/// The epilogue of `op`: the next kernel, when it is a computable generic
/// that reads C where it was written (by identity) and C dies there, and it
/// writes none of what the product reads.
linalg::GenericOp findEpilogue(linalg::GenericOp op) {
  Operation *next = op->getNextNode();
  while (next && isInert(next))
    next = next->getNextNode();
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
  memref::AllocOp alloc = reshapedAlloc(op.getDpsInits()[0]);
  if (!epilogue || !alloc || !isComputable(epilogue))
    return {};
  for (Operation *access : accessesOf(alloc.getResult())) {
    bool writesC = isa<linalg::FillOp, linalg::GenericOp>(access) && access->isBeforeInBlock(op);
    if (access != op && access != epilogue && !writesC)
      return {};
  }
  bool readsC = false;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    if (rootOf(input->get()) != alloc.getResult())
      continue;
    if (!epilogue.getMatchingIndexingMap(input).isIdentity() || !reshapedAlloc(input->get()))
      return {};
    readsC = true;
  }
  // Each thread reads what it overwrites there, or other buffers; and C
  // only as its inputs (its loads would find C never stored).
  Value output = rootOf(epilogue.getDpsInits()[0]);
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (rootOf(input->get()) == output && !epilogue.getMatchingIndexingMap(input).isIdentity())
      return {};
  WalkResult loads = epilogue.getRegion().walk([&](memref::LoadOp load) {
    Value root = rootOf(load.getMemRef());
    return root == output || root == alloc.getResult() ? WalkResult::interrupt()
                                                       : WalkResult::advance();
  });
  if (loads.wasInterrupted())
    return {};
  if (!readsC || output == rootOf(op.getDpsInputs()[0]) || output == rootOf(op.getDpsInputs()[1]))
    return {};
  return epilogue;
}

/// The most blocks of 64x64 that may each compute the same element of A
/// or B with a taken-in writer. Every block along B's columns stages the
/// same tile of A, so a writer of A taken in runs once per column block.
/// Computed staging already takes more issue slots per stage than the
/// tensor cores (a rounding's dozen integer operations, or a gather's index
/// arithmetic, for each of 32 elements a thread, against 32 mma.sync a
/// warp), so past two such blocks the recomputation should outweigh the
/// pass over memory it saves. An estimate from issue slots, not yet a
/// measurement: the GPU check's GEMMs (whose operands are rounded by
/// kernels of their own) and ResNet-50 (whose layer3 and layer4 gathers are
/// too) will tell.
constexpr int64_t kMaxRecomputation = 2;

/// The fusions of `product`'s launch: with its epilogue if the buffers
/// computed in the launch do not include what the epilogue writes, else
/// without it. The limit on recomputation counts blocks of 64x64 whatever
/// the tile: 32x32 tiles double the count, but they are for products small
/// enough that a kernel's launch costs more than computing an element
/// again.
Fusion fuse(const Product &product) {
  linalg::GenericOp op = product.op;
  for (linalg::GenericOp epilogue : {findEpilogue(op), linalg::GenericOp()}) {
    Fusion fusion;
    fusion.epilogue = epilogue;
    fusion.anchor = epilogue ? epilogue.getOperation() : op.getOperation();
    fuseWriter(product.c, op, fusion, /*isC=*/true);
    if (llvm::divideCeil(product.numCols, kLargeTile) <= kMaxRecomputation)
      fuseWriter(product.a, op, fusion);
    if (llvm::divideCeil(product.numRows, kLargeTile) <= kMaxRecomputation)
      fuseWriter(product.b, op, fusion);
    if (!epilogue)
      return fusion;
    Value output = rootOf(epilogue.getDpsInits()[0]);
    if (llvm::none_of(fusion.writers, [&](auto &entry) {
          return llvm::is_contained(readRoots(entry.second), output);
        }))
      return fusion;
  }
  llvm_unreachable("the second try fuses no epilogue");
}

/// Each index of `view` (an allocation seen through reshapes) at `indices`
/// as the allocation's, or the other way round (`fromAlloc`).
class Reshapes {
public:
  Reshapes(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  SmallVector<Value> toAlloc(Value view, ValueRange indices) {
    SmallVector<Value> at(indices);
    while (Operation *reshape = view.getDefiningOp()) {
      if (!isReshape(reshape))
        break;
      at = step(reshape, at, /*towardsSource=*/true);
      view = reshape->getOperand(0);
    }
    return at;
  }

  SmallVector<Value> fromAlloc(Value view, ValueRange indices) {
    SmallVector<Operation *> chain;
    for (Value at = view; Operation *reshape = at.getDefiningOp(); at = reshape->getOperand(0)) {
      if (!isReshape(reshape))
        break;
      chain.push_back(reshape);
    }
    SmallVector<Value> at(indices);
    for (Operation *reshape : llvm::reverse(chain))
      at = step(reshape, at, /*towardsSource=*/false);
    return at;
  }

private:
  /// Through one reshape: its groups of the expanded side's dimensions
  /// flatten into one index of the collapsed side.
  SmallVector<Value> step(Operation *reshape, ArrayRef<Value> at, bool towardsSource) {
    bool collapse = isa<memref::CollapseShapeOp>(reshape);
    auto expandedType = cast<MemRefType>(collapse ? reshape->getOperand(0).getType()
                                                  : reshape->getResult(0).getType());
    SmallVector<ReassociationIndices> groups =
        collapse ? cast<memref::CollapseShapeOp>(reshape).getReassociationIndices()
                 : cast<memref::ExpandShapeOp>(reshape).getReassociationIndices();
    // Towards the source of a collapse, or away from that of an expand,
    // the indices split; otherwise they join.
    bool split = towardsSource == collapse;
    SmallVector<Value> result;
    for (auto [g, group] : llvm::enumerate(groups)) {
      if (split) {
        SmallVector<int64_t> extents;
        for (int64_t dim : group)
          extents.push_back(expandedType.getDimSize(dim));
        llvm::append_range(result, delinearize(b, loc, at[g], extents));
      } else {
        Value flat = constant(0);
        for (int64_t dim : group) {
          flat = arith::MulIOp::create(b, loc, flat, constant(expandedType.getDimSize(dim)));
          flat = arith::AddIOp::create(b, loc, flat, at[dim]);
        }
        result.push_back(flat);
      }
    }
    return result;
  }

  Value constant(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  OpBuilder &b;
  Location loc;
};

/// How the tensor-core instructions read their operands in one format.
struct Format {
  Precision precision;
  int64_t k;           ///< the reduction per instruction (32 bytes of it)
  int64_t perRegister; ///< A and B elements per 32-bit register (mma.sync)
  NVVM::MMATypes type; ///< for nvvm.mma.sync (fp8 goes through PTX)
  NVVM::WGMMATypes wgmmaType;
  unsigned bits; ///< an element's, in shared memory for wgmma
};

std::optional<Format> formatFor(Precision precision, bool fp8) {
  using NVVM::MMATypes, NVVM::WGMMATypes;
  switch (precision) {
  case Precision::TF32:
    return Format{precision, 8, 1, MMATypes::tf32, WGMMATypes::tf32, 32};
  case Precision::FP16:
    return Format{precision, 16, 2, MMATypes::f16, WGMMATypes::f16, 16};
  case Precision::BF16:
    return Format{precision, 16, 2, MMATypes::bf16, WGMMATypes::bf16, 16};
  case Precision::FP8:
    if (fp8)
      return Format{precision, 32, 4, MMATypes::e4m3, WGMMATypes::e4m3, 8};
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

/// wgmma's shared-memory operands without swizzling are made of core
/// matrices: 8 rows of 16 bytes, each 128 contiguous bytes.
constexpr int64_t kCoreRows = 8, kCoreRowBytes = 16, kCoreBytes = kCoreRows * kCoreRowBytes;

/// A TMA operand's tiles are rows of kBlockK f32 (128 bytes) along the
/// reduction, swizzled as wgmma reads them: the 16-byte chunk c of row r
/// lies at chunk c ^ (r % 8) of the row, so a stage must start at a
/// multiple of 1024 bytes (8 rows).
constexpr int64_t kSwizzleBytes = 128, kSwizzleAtomBytes = 1024;

/// How the Tensor Memory Accelerator sees an operand (wgmma, tf32): a
/// tensor of [batch..., rows, reduction], innermost first in `dims`.
struct TmaView {
  SmallVector<int64_t> dims, strides; ///< strides in elements, of dims 1..
  SmallVector<unsigned> batch;        ///< the loops of dims 2.., in that order
};

/// The stride (in `strides`, a memref's) of the dimension `map` indexes by
/// `loop`, if any does.
std::optional<int64_t> loopStride(ArrayRef<int64_t> strides, AffineMap map, unsigned loop) {
  for (auto [result, expr] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(expr); dim && dim.getPosition() == loop)
      return strides[result];
  return std::nullopt;
}

/// The view of `memref` that TMA can copy a product's tiles from: the
/// reduction contiguous, the rows (`loops`) one run of a single stride
/// once flattened, each stride and the view's offset a multiple of 16
/// bytes, at most 5 dimensions.
std::optional<TmaView> tmaView(const Product &p, Value memref, AffineMap map,
                               ArrayRef<unsigned> loops) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.getElementType().isF32() || failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % 4 != 0)
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

/// An operand the launch copies with TMA: its map's address (made outside
/// the launch) and the view it maps.
struct TmaOperand {
  Value map;
  TmaView view;
};

/// Builds the kernel body; `b` is inside the launch.
class KernelBuilder : IndexArithmetic {
public:
  KernelBuilder(OpBuilder &b, Location loc, const Product &product, const Format &format,
                const Fusion &fusion, bool wgmma, int64_t tile, std::optional<TmaOperand> tmaA,
                std::optional<TmaOperand> tmaB)
      : IndexArithmetic(b, loc), p(product), f(format), fusion(fusion), wgmma(wgmma), tile(tile),
        tmaA(tmaA), tmaB(tmaB), reshapes(b, loc), tilesM(wgmma ? 1 : tile / 2 / 16),
        tilesN(wgmma ? tile / 8 : tile / 2 / 8),
        stages(tile == kSmallTile ? kSmallTileStages : kStages) {}

  void build(gpu::LaunchOp launch) {
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

private:
  /// A flattened index along some loops: each loop's index (clamped to the
  /// last, so every load is in bounds) and whether it is inside.
  struct Position {
    SmallVector<std::pair<unsigned, Value>> dims;
    Value valid;
  };

  Value scaled(Value value, float scale) {
    if (scale == 1.0f)
      return value;
    Value factor = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(scale));
    return arith::MulFOp::create(b, loc, value, factor);
  }

  /// mma.sync.m16n8k32 on E4M3 operands, which nvvm.mma.sync does not take:
  /// the PTX itself (sm_89 and later).
  Value mmaFP8(Type resultType, ArrayRef<Value> a, ArrayRef<Value> bFragment, ValueRange c) {
    SmallVector<Value> operands(a);
    llvm::append_range(operands, bFragment);
    llvm::append_range(operands, c);
    return LLVM::InlineAsmOp::create(
               b, loc, resultType, operands,
               "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {$0, $1, $2, $3}, "
               "{$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
               "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*has_side_effects=*/false,
               /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  }

  /// Splits `flat` (in [0, total)) into the indices of `loops`, innermost
  /// fastest.
  SmallVector<std::pair<unsigned, Value>> decompose(Value flat, ArrayRef<unsigned> loops) {
    SmallVector<int64_t> extents;
    for (unsigned loop : loops)
      extents.push_back(p.ranges[loop]);
    SmallVector<std::pair<unsigned, Value>> indices;
    for (auto [loop, index] : llvm::zip(loops, delinearize(b, loc, flat, extents)))
      indices.push_back({loop, index});
    return indices;
  }

  /// Clamped to `total - 1`, or to `last` when given (the start of the
  /// last aligned run).
  Position position(Value flat, ArrayRef<unsigned> loops, int64_t total,
                    std::optional<int64_t> last = std::nullopt) {
    Value valid = lessThan(flat, total);
    Value clamped = arith::MinUIOp::create(b, loc, flat, constant(last.value_or(total - 1)));
    return {decompose(clamped, loops), valid};
  }

  /// The indices `map` reads at these loop indices (0 for every other loop).
  SmallVector<Value> indicesOf(AffineMap map, ArrayRef<std::pair<unsigned, Value>> known) {
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

  /// How a thread stages its part of a tile x kBlockK tile of A (or B,
  /// the columns for rows): 4 runs of 4 neighbours, along the operand's
  /// contiguous direction, the reduction (`alongK`) or the rows, so that
  /// neighbouring threads read neighbouring elements. The tile in shared
  /// memory keeps that direction contiguous too: a run is one 16-byte
  /// cp.async where the layout keeps runs aligned, else 4 of 4 bytes.
  /// wgmma's tiles are its core matrices instead, which keep the reduction
  /// contiguous whatever the operand's layout, and hold the format's bits:
  /// fp16, bf16 and fp8 are converted and stored by the threads. A TMA
  /// operand (`tma`) is staged by no thread but by `copyTiles`, a box a
  /// stage.
  struct Staging {
    Value memref;
    AffineMap map;
    bool alongK = true;
    bool computed = false;  ///< by a fused writer, not copied
    bool converted = false; ///< stored by the threads in the format (wgmma)
    bool vector = false;    ///< a run is one 16-byte copy
    float scale = 1.0f;     ///< fp8's, divided out when packed or converted
    /// Copied by TMA (wgmma, tf32): a stage is one box of the operand's map.
    bool tma = false;
    Value tensorMap;                 ///< the map's address
    SmallVector<unsigned> mapBatch;  ///< the batch loops of the map's dimensions 2..
    Value blockBase;                 ///< the block's first row
    SmallVector<Position> positions; ///< alongK: each run's row; else each of a run's rows
    SmallVector<Value> rowStarts;    ///< per run, within the tile
    SmallVector<Value> kStarts;      ///< per run, within the stage
  };

  static constexpr int64_t kRun = 4;

  /// With wgmma: tf32 as f32, the others as their bits.
  Type tileElement() {
    if (!wgmma || f.bits == 32)
      return b.getF32Type();
    return b.getIntegerType(f.bits);
  }

  /// Elements of a core matrix row (wgmma).
  int64_t coreRow() { return kCoreRowBytes * 8 / f.bits; }

  /// A TMA stage: tile rows of kBlockK f32.
  int64_t tmaStageBytes() { return tile * kBlockK * 4; }

  MemRefType tileType(const Staging &s) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    // TMA's stages as bytes, with room to start them at the swizzle's
    // alignment (shared memory gives 16).
    if (s.tma)
      return MemRefType::get({stages * tmaStageBytes() + kSwizzleAtomBytes - 16}, b.getI8Type(),
                             MemRefLayoutAttrInterface(), workgroup);
    // For wgmma, core matrices: [stage][row / 8][k / coreRow][row % 8][k %
    // coreRow]. Otherwise as the operand is in memory; padding makes the
    // fragment reads of a warp hit 32 banks (tf32).
    SmallVector<int64_t> shape =
        wgmma      ? SmallVector<int64_t>{stages, tile / kCoreRows, kBlockK / coreRow(), kCoreRows,
                                          coreRow()}
        : s.alongK ? SmallVector<int64_t>{stages, tile, kBlockK + 4}
                   : SmallVector<int64_t>{stages, kBlockK, tile + 8};
    return MemRefType::get(shape, tileElement(), MemRefLayoutAttrInterface(), workgroup);
  }

  Staging staging(Value memref, AffineMap map, ArrayRef<unsigned> loops, int64_t total,
                  Value blockBase, Value tid, const std::optional<TmaOperand> &tma) {
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
    s.alongK = !kStride || !rowStride || *kStride <= *rowStride;
    s.converted = wgmma && f.bits != 32 && !s.computed;
    // 16 bytes at once need 16-byte aligned runs in memory: the run's
    // direction contiguous, every other stride and the offset multiples of
    // a run, and the extent along it too (runs never straddle its end).
    int64_t extent = s.alongK ? p.ranges[p.k] : loops.empty() ? 1 : p.ranges[loops.back()];
    // (wgmma's tiles keep the reduction contiguous.)
    s.vector = !s.computed && !s.converted && (s.alongK || !wgmma) && strided &&
               (s.alongK ? kStride : rowStride) == 1 && !ShapedType::isDynamic(offset) &&
               offset % kRun == 0 && extent % kRun == 0 &&
               llvm::all_of(strides, [&](int64_t stride) {
                 return stride == 1 || (!ShapedType::isDynamic(stride) && stride % kRun == 0);
               });
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
        s.positions.push_back(position(add(blockBase, rowStart), loops, total, total - kRun));
      else
        for (int64_t e = 0; e < kRun; ++e)
          s.positions.push_back(position(add(blockBase, add(rowStart, constant(e))), loops, total));
    }
    return s;
  }

  /// The element at `row` and reduction index `k` of a stage in `tile`.
  SmallVector<Value> inTile(const Staging &s, Value buffer, Value row, Value k) {
    if (wgmma)
      return {buffer, div(row, kCoreRows), div(k, coreRow()), rem(row, kCoreRows),
              rem(k, coreRow())};
    return s.alongK ? SmallVector<Value>{buffer, row, k} : SmallVector<Value>{buffer, k, row};
  }

  /// Fills `buffer` of `tile` with the operand's elements from reduction
  /// index `k0` on: zeros past the edges.
  void stage(Value tile, const Staging &s, Value buffer, Value k0) {
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
        copies.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, loc, token, tile, inTile(s, buffer, rowStart, kStart), s.memref, at,
            b.getIndexAttr(kRun), count, UnitAttr()));
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

  /// A statement of inline PTX with operands and no result.
  void ptx(StringRef text, StringRef constraints, ValueRange operands) {
    LLVM::InlineAsmOp::create(b, loc, TypeRange(), operands, text, constraints,
                              /*has_side_effects=*/true, /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                              ArrayAttr());
  }

  Value i32(Value index) { return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index); }

  /// The shared-memory address of `buffer` (a workgroup memref).
  Value sharedAddress(Value buffer) {
    return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  }

  /// Where the stages of a TMA tile start: its first multiple of 1024 bytes.
  Value tmaBase(Value tile) {
    Value address = add(sharedAddress(tile), constant(kSwizzleAtomBytes - 1));
    return arith::AndIOp::create(b, loc, address, constant(-kSwizzleAtomBytes));
  }

  /// The mbarrier of the stage in `buffer`.
  Value barrier(Value buffer) { return i32(add(sharedAddress(barriers), mul(buffer, 8))); }

  /// One mbarrier a stage, which thread 0 arms as it starts TMA's copies
  /// (one arrival, and the bytes they bring): made ready before any
  /// thread uses them. Thread 0 also acquires each tensor map through the
  /// tensormap proxy, which reads it: the host wrote it into global memory
  /// (CUDA's programming guide asks for this fence, at system scope, for
  /// maps copied there from the host).
  void initBarriers(gpu::LaunchOp launch, Value issuer,
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

  /// Thread 0 starts TMA's copies of a stage from reduction index `k0` into
  /// `buffer`, while there are stages left (TMA reads zeros past the edges
  /// of the last one).
  void copyTiles(ArrayRef<std::pair<Value, const Staging *>> tma, Value issuer, Value buffer,
                 Value k0) {
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

  /// Every thread waits until the barrier of `buffer` completes the phase
  /// of `parity`.
  void waitBarrier(Value buffer, Value parity) {
    ptx("{\n.reg .pred done;\nwait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@!done bra wait;\n}",
        "r,r", {barrier(buffer), i32(parity)});
  }

  /// Closes the group of copies issued since the last one: its token, or
  /// null when there were none (both operands computed).
  Value commit() {
    if (copies.empty())
      return {};
    SmallVector<Value> tokens;
    for (nvgpu::DeviceAsyncCopyOp copy : copies)
      tokens.push_back(copy.getAsyncToken());
    copies.clear();
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
  }

  /// One stage's products with mma.sync: each warp reads its fragments of
  /// A and B for every step of f.k and multiplies its mma tiles.
  void multiplyWarps(Value tileA, const Staging &stageA, Value tileB, const Staging &stageB,
                     Value buffer, Value group, Value inGroup, SmallVector<Value> &acc) {
    for (int64_t k = 0; k < kBlockK; k += f.k) {
      SmallVector<SmallVector<Value>> fragA, fragB;
      for (int64_t i = 0; i < tilesM; ++i)
        fragA.push_back(loadA(tileA, stageA, buffer, i, k, group, inGroup));
      for (int64_t j = 0; j < tilesN; ++j)
        fragB.push_back(loadB(tileB, stageB, buffer, j, k, group, inGroup));
      for (int64_t i = 0; i < tilesM; ++i)
        for (int64_t j = 0; j < tilesN; ++j) {
          int64_t at = (i * tilesN + j) * 4;
          Value d = multiply(fragA[i], fragB[j], ArrayRef(acc).slice(at, 4));
          for (int64_t r = 0; r < 4; ++r)
            acc[at + r] = LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{r});
        }
    }
  }

  /// One stage's products with wgmma: a group of kBlockK / f.k
  /// instructions of 64x64 on the tiles in shared memory, waited for before
  /// the accumulators are read again.
  SmallVector<Value> multiplyWarpgroup(Value tileA, const Staging &stageA, Value tileB,
                                       const Staging &stageB, Value buffer, ArrayRef<Value> acc) {
    auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                 SmallVector<Type>(acc.size(), b.getF32Type()));
    Value d = LLVM::PoisonOp::create(b, loc, type);
    for (auto [i, value] : llvm::enumerate(acc))
      d = LLVM::InsertValueOp::create(b, loc, d, value, ArrayRef<int64_t>{int64_t(i)});
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    MLIRContext *context = b.getContext();
    auto format = NVVM::WGMMATypesAttr::get(context, f.wgmmaType);
    auto one = NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one);
    for (int64_t step = 0; step < kBlockK / f.k; ++step)
      d = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, type, d, descriptor(tileA, stageA, buffer, step),
          descriptor(tileB, stageB, buffer, step),
          NVVM::MMAShapeAttr::get(context, tile, tile, f.k), format, format,
          NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
          NVVM::WGMMAScaleOutAttr::get(context, NVVM::WGMMAScaleOut::one), one, one,
          NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::row),
          NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::col), NVVM::MMAIntOverflowAttr());
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    SmallVector<Value> result;
    for (int64_t i = 0; i < int64_t(acc.size()); ++i)
      result.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i}));
    return result;
  }

  /// The wgmma matrix descriptor of step `step` (f.k along the reduction)
  /// of the stage in `buffer` of `tile`: its shared address, the distance
  /// between core matrices along the reduction (the leading dimension) and
  /// along the rows (the stride dimension), each in 16-byte units, and the
  /// swizzling.
  ///  - Without swizzling (tiles the threads stage), a step is two core
  ///    matrices along the reduction, each 128 bytes.
  ///  - A TMA tile is swizzled within 128-byte rows: a step starts f.k
  ///    elements into each row, 8 rows (1024 bytes) apart; the leading
  ///    dimension is unused (the row holds all of a step), and the
  ///    swizzling applies to the address bits, which is why stages start
  ///    at multiples of 1024 bytes.
  Value descriptor(Value tile, const Staging &s, Value buffer, int64_t step) {
    Value address;
    int64_t fields;
    if (s.tma) {
      address = add(tmaBase(tile), add(mul(buffer, tmaStageBytes()), constant(step * f.k * 4)));
      fields = int64_t(1) << 16 | (kSwizzleAtomBytes >> 4) << 32 | int64_t(1) << 62;
    } else {
      auto type = cast<MemRefType>(tile.getType());
      int64_t stageBytes = type.getNumElements() / stages * f.bits / 8;
      int64_t rowBlockBytes = type.getDimSize(2) * kCoreBytes;
      address =
          add(sharedAddress(tile), add(mul(buffer, stageBytes), constant(step * 2 * kCoreBytes)));
      fields = (kCoreBytes >> 4) << 16 | (rowBlockBytes >> 4) << 32;
    }
    Type i64 = b.getI64Type();
    auto bits = [&](int64_t value) { return arith::ConstantIntOp::create(b, loc, i64, value); };
    Value start = arith::ShRUIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, arith::IndexCastUIOp::create(b, loc, i64, address),
                              bits(0x3ffff)),
        bits(4));
    return arith::OrIOp::create(b, loc, start, bits(fields));
  }

  /// One mma.sync on fragments of A and B and four accumulators.
  Value multiply(ArrayRef<Value> a, ArrayRef<Value> bFragment, ArrayRef<Value> acc) {
    Type f32 = b.getF32Type();
    Type resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    if (f.precision == Precision::FP8)
      return mmaFP8(resultType, a, bFragment, acc);
    return NVVM::MmaOp::create(
               b, loc, resultType, a, bFragment, acc, {16, 8, f.k}, std::nullopt, std::nullopt,
               std::array<NVVM::MMATypes, 2>{f.type, f.type},
               std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col})
        .getResult();
  }

  /// An element's bits in the format, as wgmma reads it from shared memory
  /// (fp16, bf16 or fp8; the value is rounded to it already).
  Value inFormat(Value element) {
    Type i16 = b.getI16Type();
    switch (f.precision) {
    case Precision::FP16:
      return arith::BitcastOp::create(b, loc, i16,
                                      arith::TruncFOp::create(b, loc, b.getF16Type(), element));
    case Precision::BF16: {
      // The high half of the f32 bits.
      Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), element);
      Value sixteen = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 16);
      return arith::TruncIOp::create(b, loc, i16, arith::ShRUIOp::create(b, loc, bits, sixteen));
    }
    default: {
      // cvt makes a pair; the low byte is the second operand's.
      Value pair = LLVM::InlineAsmOp::create(b, loc, i16, ValueRange{element, element},
                                             "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;", "=h,f,f",
                                             /*has_side_effects=*/false, /*is_align_stack=*/false,
                                             LLVM::tailcallkind::TailCallKind::None,
                                             LLVM::AsmDialectAttr(), ArrayAttr())
                       .getResult(0);
      return arith::TruncIOp::create(b, loc, b.getI8Type(), pair);
    }
    }
  }

  /// One 32-bit register of `perRegister` elements, as mma.sync reads it.
  Value pack(ArrayRef<Value> elements) {
    Type i32 = b.getI32Type();
    switch (f.precision) {
    case Precision::TF32:
      return arith::BitcastOp::create(b, loc, i32, elements[0]);
    case Precision::FP8:
      // Two cvt make two E4M3 pairs (the second operand takes the low
      // byte); the first element takes the lowest byte of the register.
      return LLVM::InlineAsmOp::create(
                 b, loc, i32, elements,
                 "{ .reg .b16 lo, hi;\n"
                 "cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1;\n"
                 "cvt.rn.satfinite.e4m3x2.f32 hi, $4, $3;\n"
                 "mov.b32 $0, {lo, hi}; }",
                 "=r,f,f,f,f", /*has_side_effects=*/false, /*is_align_stack=*/false,
                 LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
          .getResult(0);
    case Precision::FP16: {
      Type f16 = b.getF16Type();
      SmallVector<Value> halves;
      for (Value element : elements)
        halves.push_back(arith::TruncFOp::create(b, loc, f16, element));
      return vector::FromElementsOp::create(b, loc, VectorType::get({2}, f16), halves);
    }
    default: {
      // bf16 is the high half of the f32 bits (exactly, as the value is
      // rounded already); the first element takes the low half.
      Value low = arith::BitcastOp::create(b, loc, i32, elements[0]);
      Value high = arith::BitcastOp::create(b, loc, i32, elements[1]);
      Value sixteen = arith::ConstantIntOp::create(b, loc, i32, 16);
      Value mask = arith::ConstantIntOp::create(b, loc, i32, -65536); // 0xffff0000
      return arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, high, mask),
                                  arith::ShRUIOp::create(b, loc, low, sixteen));
    }
    }
  }

  /// The fragments, as the PTX ISA lays them out: a 32-bit register holds
  /// `perRegister` neighbours along the reduction; thread t of a group of
  /// four holds the t-th such run of each 128-bit line (k/2 elements). They
  /// are read from the tiles in shared memory, from column `k` of the stage
  /// in `buffer` on, and packed (fp8 over its scale).

  /// A's fragment of mma tile `i`: registers a0..a3 hold rows g, g+8, g,
  /// g+8, the first two from the first half of the k step, the others from
  /// the second.
  SmallVector<Value> loadA(Value tile, const Staging &s, Value buffer, int64_t i, int64_t k,
                           Value g, Value t) {
    SmallVector<Value> registers;
    for (int64_t r = 0; r < 4; ++r) {
      Value row = add(warpRow, add(g, constant(16 * i + 8 * (r % 2))));
      registers.push_back(fragment(tile, s, buffer, row, k + f.k / 2 * (r / 2), t));
    }
    return registers;
  }

  /// B's fragment of mma tile `j`: column g; registers b0 and b1 hold the
  /// first and second half of the k step.
  SmallVector<Value> loadB(Value tile, const Staging &s, Value buffer, int64_t j, int64_t k,
                           Value g, Value t) {
    SmallVector<Value> registers;
    Value column = add(warpCol, add(g, constant(8 * j)));
    for (int64_t r = 0; r < 2; ++r)
      registers.push_back(fragment(tile, s, buffer, column, k + f.k / 2 * r, t));
    return registers;
  }

  /// One register: the `perRegister` elements of `row` of the tile from
  /// column k + t * perRegister on, over the operand's scale.
  Value fragment(Value tile, const Staging &s, Value buffer, Value row, int64_t k, Value t) {
    SmallVector<Value> elements;
    for (int64_t e = 0; e < f.perRegister; ++e) {
      Value column = add(mul(t, f.perRegister), constant(k + e));
      elements.push_back(scaled(
          memref::LoadOp::create(b, loc, tile, inTile(s, buffer, row, column)), 1.0f / s.scale));
    }
    return pack(elements);
  }

  /// C's element `r` of mma tile (i, j): rows g (r < 2) and g+8, columns
  /// 2t + r % 2.
  std::pair<const Position &, const Position &> placeOfC(int64_t i, int64_t j, int64_t r) {
    return {rows[i * 2 + r / 2], colsC[j * 2 + r % 2]};
  }

  SmallVector<Value> indicesOfC(const Position &row, const Position &col) {
    SmallVector<std::pair<unsigned, Value>> known(batchIndex);
    known.append(row.dims);
    known.append(col.dims);
    return indicesOf(p.mapC, known);
  }

  /// C's initial element (at clamped indices outside it: never stored).
  Value loadC(int64_t i, int64_t j, int64_t r) {
    auto [row, col] = placeOfC(i, j, r);
    return read(p.c, indicesOfC(row, col));
  }

  /// Stores C's element, or the epilogue's on it, within bounds.
  void storeC(int64_t i, int64_t j, int64_t r, Value value) {
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

  /// The element of `buffer` at `indices`: loaded, or computed as its
  /// fused writer computes it.
  Value read(Value buffer, ValueRange indices) {
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

  /// What `op`'s body yields at loop indices `loops`, its inputs read there
  /// but for those `known` gives.
  Value compute(linalg::GenericOp op, ValueRange loops,
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

  const Product &p;
  const Format &f;
  const Fusion &fusion;
  bool wgmma;
  int64_t tile; ///< a block's tile of C is tile x tile
  std::optional<TmaOperand> tmaA, tmaB;
  Value barriers; ///< one mbarrier per stage, when an operand comes through TMA
  Reshapes reshapes;
  int64_t tilesM, tilesN; ///< a warp's mma tiles of 16x8 along its rows and columns
  int64_t stages;         ///< of the pipeline, each a tile x kBlockK of A and of B
  SmallVector<std::pair<unsigned, Value>> batchIndex;
  SmallVector<Position> rows, colsC;
  Value warpRow, warpCol; ///< the warp's first row and column in the block's tile
  SmallVector<nvgpu::DeviceAsyncCopyOp> copies; ///< issued since the last commit
};

struct TensorCoreProducts : impl::TensorCoreProductsBase<TensorCoreProducts> {
  using TensorCoreProductsBase::TensorCoreProductsBase;

  /// The side of a block's tile of C for `product`.
  int64_t tileFor(const Product &product) const {
    int64_t blocks = llvm::divideCeil(product.numRows, kLargeTile) *
                     llvm::divideCeil(product.numCols, kLargeTile) * product.numBatch;
    return wgmma || blocks >= kFewBlocks ? kLargeTile : kSmallTile;
  }

  void runOnOperation() override {
    std::vector<std::pair<Product, Format>> products;
    for (auto op : getOperation().getOps<linalg::GenericOp>()) {
      auto name = op->getAttrOfType<StringAttr>(kPrecisionAttr);
      std::optional<Precision> precision = name ? parsePrecision(name.getValue()) : std::nullopt;
      std::optional<Format> format = precision ? formatFor(*precision, fp8) : std::nullopt;
      if (!format)
        continue;
      std::optional<Product> product = matchProduct(op);
      if (!product)
        continue;
      if (*precision == Precision::FP8) {
        auto scales = op->getAttrOfType<DenseF32ArrayAttr>(kScalesAttr);
        if (!scales || scales.size() != 2)
          continue;
        product->scaleA = scales[0];
        product->scaleB = scales[1];
      }
      products.push_back({*product, *format});
    }
    for (auto &[product, format] : products) {
      int64_t tile = tileFor(product);
      Fusion fusion = fuse(product);
      SmallVector<Operation *> joined = {product.op};
      if (fusion.epilogue)
        joined.push_back(fusion.epilogue);
      for (auto [alloc, writer] : fusion.writers)
        joined.push_back(writer);
      SmallVector<Location> locations;
      for (Operation *op : joined)
        locations.push_back(op->getLoc());
      Location loc = FusedLoc::get(&getContext(), locations);

      OpBuilder b(fusion.anchor);
      // wgmma's tf32 operands that are copied as they are come through TMA.
      std::optional<TmaOperand> tmaA, tmaB;
      if (wgmma && format.bits == 32) {
        auto tma = [&](Value operand, AffineMap map,
                       ArrayRef<unsigned> loops) -> std::optional<TmaOperand> {
          memref::AllocOp alloc = reshapedAlloc(operand);
          if (alloc && fusion.writers.count(alloc.getResult()))
            return std::nullopt;
          std::optional<TmaView> view = tmaView(product, operand, map, loops);
          if (!view)
            return std::nullopt;
          // A stage's tile: kBlockK along the reduction, a tile of rows.
          SmallVector<int64_t> box(view->dims.size(), 1);
          box[0] = kBlockK;
          box[1] = tile;
          Value address =
              TensorMapOp::create(b, loc, operand, b.getDenseI64ArrayAttr(view->dims),
                                  b.getDenseI64ArrayAttr(view->strides),
                                  b.getDenseI64ArrayAttr(box), b.getI64IntegerAttr(kSwizzleBytes));
          return TmaOperand{address, *view};
        };
        tmaA = tma(product.a, product.mapA, product.rows);
        tmaB = tma(product.b, product.mapB, product.cols);
      }
      auto size = [&](int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); };
      Value one = size(1);
      // Rows on x, which allows the most blocks.
      auto launch = gpu::LaunchOp::create(b, loc, size(llvm::divideCeil(product.numRows, tile)),
                                          size(llvm::divideCeil(product.numCols, tile)),
                                          size(product.numBatch), size(kThreads), one, one);
      launch->setAttr(kKernelAttr, b.getStringAttr("matmul"));
      for (StringRef name : {kPrecisionAttr, kLayoutAttr})
        if (Attribute value = product.op->getAttr(name))
          launch->setAttr(name, value);
      b.setInsertionPointToStart(&launch.getBody().front());
      KernelBuilder(b, loc, product, format, fusion, wgmma, tile, tmaA, tmaB).build(launch);

      // What the launch computes instead of reading is stored no more.
      SmallVector<Value> dead;
      if (fusion.epilogue)
        dead.push_back(rootOf(product.c));
      for (auto [alloc, writer] : fusion.writers)
        if (!llvm::is_contained(dead, alloc))
          dead.push_back(alloc);
      for (Operation *op : joined)
        op->erase();
      for (Value buffer : dead)
        eraseIfDead(buffer);
    }
  }
};

} // namespace
} // namespace kiln
