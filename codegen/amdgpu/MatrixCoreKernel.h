// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MatrixCoreKernel.h - a product as an MFMA kernel ---------*- C++ -*-===//
//
// The kernel builder of kiln-matrix-core-products (Passes.td): one
// product's launch body, on AMD's matrix cores.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_AMDGPU_MATRIXCOREKERNEL_H
#define KILN_CODEGEN_AMDGPU_MATRIXCOREKERNEL_H

#include "codegen/gpu/ProductKernel.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace kiln::amdgpu {

using namespace mlir;
using namespace products;

/// A block is 4 wavefronts of 64 lanes computing a square tile of C: 64x64
/// (each wavefront 32x32, 2x2 MFMA tiles of 16x16), or 32x32 (one MFMA
/// tile a wavefront) for products that would launch few blocks of 64x64.
constexpr int64_t kWave = 64, kThreads = 4 * kWave;
constexpr int64_t kLargeTile = 64, kSmallTile = 32;
/// Fewer blocks of 64x64 than this take 32x32 ones.
constexpr int64_t kFewBlocks = 128;
/// The side of an MFMA tile, and the reduction a stage in LDS covers.
constexpr int64_t kMfma = 16, kBlockK = 32;

/// How the MFMA instructions read their operands in one format.
struct Format {
  Precision precision;
  int64_t k;    ///< the reduction per instruction
  Type element; ///< as the instruction reads it: f32, f16, bf16 or an f8 type
  bool xf32;    ///< tf32 as xf32 (gfx942's reducePrecision)
  /// The elements of A (and of B) each lane holds: a quarter of the step.
  int64_t perLane() const { return k / 4; }
};

/// The format's instructions on the chip (`xf32`: gfx942's; `fp8`: the
/// 8-bit format its MFMA reads, if any); none for formats without MFMA.
std::optional<Format> formatFor(MLIRContext *context, Precision precision, bool xf32,
                                std::optional<Precision> fp8);

/// Builds the kernel body; `b` is inside the launch.
class KernelBuilder : ProductKernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const Product &product, const Format &format,
                const Fusion &fusion, int64_t tile)
      : ProductKernelBuilder(b, loc, product, fusion), f(format), tile(tile),
        tiles(tile / 2 / kMfma) {}

  void build(gpu::LaunchOp launch);

private:
  /// How a thread stages its part of a tile x kBlockK tile of A (or B, the
  /// columns for rows): the block's threads cover kStagedRows rows at a
  /// time, thread t reduction index t % kBlockK of row t / kBlockK of each,
  /// so that neighbouring threads read neighbours along the reduction. Each
  /// element is read (or computed by its fused writer), zero past the
  /// edges, divided by the operand's scale (8-bit formats) and stored as
  /// f32 into LDS.
  static constexpr int64_t kStagedRows = kThreads / kBlockK;
  struct Staging {
    Value memref;
    AffineMap map;
    float scale;
    SmallVector<Position> rows; ///< the thread's rows: one each kStagedRows
  };

  Staging staging(Value memref, AffineMap map, float scale, ArrayRef<unsigned> loops,
                  OpFoldResult total, Value blockBase);

  /// Fills `tile` with the operand's elements from reduction index `k0` on.
  void stage(Value tile, const Staging &s, Value k0);

  /// A lane's fragment of the 16 rows from `row` of `tile` (in LDS), for
  /// the instruction at `k` of the stage: its perLane elements from
  /// k + perLane * (lane / 16), converted to the format (a scalar f32 for
  /// one element).
  Value fragment(Value tile, Value row, int64_t k);

  /// C's element `r` of MFMA tile (i, j): row 4 (lane / 16) + r, column
  /// lane % 16.
  std::pair<const Position &, const Position &> placeOfC(int64_t i, int64_t j, int64_t r) {
    return {rowsC[i * 4 + r], colsC[j]};
  }

  const Format &f;
  int64_t tile;  ///< a block's tile of C is tile x tile
  int64_t tiles; ///< a wavefront's MFMA tiles along its rows, and its columns
  Value threadId, lane, waveRow, waveCol;
  SmallVector<Position> rowsC, colsC;
};

} // namespace kiln::amdgpu

#endif // KILN_CODEGEN_AMDGPU_MATRIXCOREKERNEL_H
