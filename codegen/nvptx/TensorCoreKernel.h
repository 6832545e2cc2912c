// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- TensorCoreKernel.h - a product as a tensor-core kernel ---*- C++ -*-===//
//
// The kernel builder: it writes one product's launch body (see
// TensorCoreProducts.cpp for the kernel's shape). Its parts live in three
// files: TensorCoreKernel.cpp (the block's layout, C, the taken-in
// kernels), TensorCoreStaging.cpp (tiles into shared memory by cp.async,
// TMA and mbarriers) and TensorCoreInstructions.cpp (fragments, mma.sync
// and wgmma).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_NVPTX_TENSORCOREKERNEL_H
#define KILN_CODEGEN_NVPTX_TENSORCOREKERNEL_H

#include "codegen/gpu/ProductKernel.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace kiln::nvptx {

using namespace mlir;
using namespace products;

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

/// wgmma's shared-memory operands without swizzling are made of core
/// matrices: 8 rows of 16 bytes, each 128 contiguous bytes.
constexpr int64_t kCoreRows = 8, kCoreRowBytes = 16, kCoreBytes = kCoreRows * kCoreRowBytes;

/// A TMA operand's tiles are rows of kBlockK f32 (128 bytes) along the
/// reduction, swizzled as wgmma reads them: the 16-byte chunk c of row r
/// lies at chunk c ^ (r % 8) of the row, so a stage must start at a
/// multiple of 1024 bytes (8 rows).
constexpr int64_t kSwizzleBytes = 128, kSwizzleAtomBytes = 1024;

/// How the tensor-core instructions read their operands in one format.
struct Format {
  Precision precision;
  int64_t k;           ///< the reduction per instruction (32 bytes of it)
  int64_t perRegister; ///< A and B elements per 32-bit register (mma.sync)
  NVVM::MMATypes type; ///< for nvvm.mma.sync (fp8 goes through PTX)
  NVVM::WGMMATypes wgmmaType;
  unsigned bits; ///< an element's, in shared memory for wgmma
};

/// The format's instructions, when the chip has them (`fp8`: sm_89 and
/// later).
std::optional<Format> formatFor(Precision precision, bool fp8);

/// How the Tensor Memory Accelerator sees an operand (wgmma, tf32): a
/// tensor of [batch..., rows, reduction], innermost first in `dims`.
struct TmaView {
  SmallVector<int64_t> dims, strides; ///< strides in elements, of dims 1..
  SmallVector<unsigned> batch;        ///< the loops of dims 2.., in that order
};

/// The view of `memref` that TMA can copy a product's tiles from: the
/// reduction contiguous, the rows (`loops`) one run of a single stride
/// once flattened, each stride and the view's offset a multiple of 16
/// bytes, at most 5 dimensions.
std::optional<TmaView> tmaView(const Product &p, Value memref, AffineMap map,
                               ArrayRef<unsigned> loops);

/// An operand the launch copies with TMA: its map's address (made outside
/// the launch) and the view it maps.
struct TmaOperand {
  Value map;
  TmaView view;
};

/// Builds the kernel body; `b` is inside the launch.
class KernelBuilder : ProductKernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const Product &product, const Format &format,
                const Fusion &fusion, bool wgmma, int64_t tile, std::optional<TmaOperand> tmaA,
                std::optional<TmaOperand> tmaB)
      : ProductKernelBuilder(b, loc, product, fusion), f(format), wgmma(wgmma), tile(tile),
        tmaA(tmaA), tmaB(tmaB), tilesM(wgmma ? 1 : tile / 2 / 16),
        tilesN(wgmma ? tile / 8 : tile / 2 / 8),
        stages(tile == kSmallTile ? kSmallTileStages : kStages) {}

  void build(gpu::LaunchOp launch);

private:
  /// mma.sync.m16n8k32 on E4M3 operands, which nvvm.mma.sync does not take:
  /// the PTX itself (sm_89 and later).
  Value mmaFP8(Type resultType, ArrayRef<Value> a, ArrayRef<Value> bFragment, ValueRange c);

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
  Type tileElement();

  /// Elements of a core matrix row (wgmma).
  int64_t coreRow() { return kCoreRowBytes * 8 / f.bits; }

  /// A TMA stage: tile rows of kBlockK f32.
  int64_t tmaStageBytes() { return tile * kBlockK * 4; }

  MemRefType tileType(const Staging &s);

  Staging staging(Value memref, AffineMap map, ArrayRef<unsigned> loops, OpFoldResult total,
                  Value blockBase, Value tid, const std::optional<TmaOperand> &tma);

  /// The element at `row` and reduction index `k` of a stage in `tile`.
  SmallVector<Value> inTile(const Staging &s, Value buffer, Value row, Value k);

  /// Fills `buffer` of `tile` with the operand's elements from reduction
  /// index `k0` on: zeros past the edges.
  void stage(Value tile, const Staging &s, Value buffer, Value k0);

  /// A statement of inline PTX with operands and no result.
  void ptx(StringRef text, StringRef constraints, ValueRange operands);

  Value i32(Value index) { return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index); }

  /// The shared-memory address of `buffer` (a workgroup memref).
  Value sharedAddress(Value buffer);

  /// Where the stages of a TMA tile start: its first multiple of 1024 bytes.
  Value tmaBase(Value tile);

  /// The mbarrier of the stage in `buffer`.
  Value barrier(Value buffer) { return i32(add(sharedAddress(barriers), mul(buffer, 8))); }

  /// One mbarrier a stage, which thread 0 arms as it starts TMA's copies
  /// (one arrival, and the bytes they bring): made ready before any
  /// thread uses them. Thread 0 also acquires each tensor map through the
  /// tensormap proxy, which reads it: the host wrote it into global memory
  /// (CUDA's programming guide asks for this fence, at system scope, for
  /// maps copied there from the host).
  void initBarriers(gpu::LaunchOp launch, Value issuer,
                    ArrayRef<std::pair<Value, const Staging *>> tma);

  /// Thread 0 starts TMA's copies of a stage from reduction index `k0` into
  /// `buffer`, while there are stages left (TMA reads zeros past the edges
  /// of the last one).
  void copyTiles(ArrayRef<std::pair<Value, const Staging *>> tma, Value issuer, Value buffer,
                 Value k0);

  /// Every thread waits until the barrier of `buffer` completes the phase
  /// of `parity`.
  void waitBarrier(Value buffer, Value parity);

  /// Closes the group of copies issued since the last one: its token, or
  /// null when there were none (both operands computed).
  Value commit();

  /// One stage's products with mma.sync: each warp reads its fragments of
  /// A and B for every step of f.k and multiplies its mma tiles.
  void multiplyWarps(Value tileA, const Staging &stageA, Value tileB, const Staging &stageB,
                     Value buffer, Value group, Value inGroup, SmallVector<Value> &acc);

  /// One stage's products with wgmma: a group of kBlockK / f.k
  /// instructions of 64x64 on the tiles in shared memory, waited for before
  /// the accumulators are read again.
  SmallVector<Value> multiplyWarpgroup(Value tileA, const Staging &stageA, Value tileB,
                                       const Staging &stageB, Value buffer, ArrayRef<Value> acc);

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
  Value descriptor(Value tile, const Staging &s, Value buffer, int64_t step);

  /// One mma.sync on fragments of A and B and four accumulators.
  Value multiply(ArrayRef<Value> a, ArrayRef<Value> bFragment, ArrayRef<Value> acc);

  /// An element's bits in the format, as wgmma reads it from shared memory
  /// (fp16, bf16 or fp8; the value is rounded to it already).
  Value inFormat(Value element);

  /// One 32-bit register of `perRegister` elements, as mma.sync reads it.
  Value pack(ArrayRef<Value> elements);

  /// The fragments, as the PTX ISA lays them out: a 32-bit register holds
  /// `perRegister` neighbours along the reduction; thread t of a group of
  /// four holds the t-th such run of each 128-bit line (k/2 elements). They
  /// are read from the tiles in shared memory, from column `k` of the stage
  /// in `buffer` on, and packed (fp8 over its scale).

  /// A's fragment of mma tile `i`: registers a0..a3 hold rows g, g+8, g,
  /// g+8, the first two from the first half of the k step, the others from
  /// the second.
  SmallVector<Value> loadA(Value tile, const Staging &s, Value buffer, int64_t i, int64_t k,
                           Value g, Value t);

  /// B's fragment of mma tile `j`: column g; registers b0 and b1 hold the
  /// first and second half of the k step.
  SmallVector<Value> loadB(Value tile, const Staging &s, Value buffer, int64_t j, int64_t k,
                           Value g, Value t);

  /// One register: the `perRegister` elements of `row` of the tile from
  /// column k + t * perRegister on, over the operand's scale.
  Value fragment(Value tile, const Staging &s, Value buffer, Value row, int64_t k, Value t);

  /// C's element `r` of mma tile (i, j): rows g (r < 2) and g+8, columns
  /// 2t + r % 2.
  std::pair<const Position &, const Position &> placeOfC(int64_t i, int64_t j, int64_t r);

  /// C's initial element `r` of mma tile (i, j).
  Value loadMmaC(int64_t i, int64_t j, int64_t r);

  /// Stores C's element `r` of mma tile (i, j).
  void storeMmaC(int64_t i, int64_t j, int64_t r, Value value);

  const Format &f;
  bool wgmma;
  int64_t tile; ///< a block's tile of C is tile x tile
  std::optional<TmaOperand> tmaA, tmaB;
  Value barriers;         ///< one mbarrier per stage, when an operand comes through TMA
  int64_t tilesM, tilesN; ///< a warp's mma tiles of 16x8 along its rows and columns
  int64_t stages;         ///< of the pipeline, each a tile x kBlockK of A and of B
  SmallVector<Position> rows, colsC;
  Value warpRow, warpCol; ///< the warp's first row and column in the block's tile
  SmallVector<nvgpu::DeviceAsyncCopyOp> copies; ///< issued since the last commit
};

} // namespace kiln::nvptx

#endif // KILN_CODEGEN_NVPTX_TENSORCOREKERNEL_H
