// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
// Rows or a batch given at run time (a symbolic batch or sequence over a
// weight) launch as many blocks as the run's rows need, computed before
// the launch (`sizeLoops`); those products take the large tiles, and no
// TMA, whose tensor maps fix their sizes.
//
// The operands hold values already rounded to the format (kiln-assign-
// precision did that), so packing them into registers is exact. An fp8
// operand holds E4M3 values times its scale (kiln.scales): the kernel
// divides the scales out as it packs, and multiplies the accumulators by
// both when it stores them.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"
#include "codegen/nvptx/TensorCoreKernel.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {

#define GEN_PASS_DEF_TENSORCOREPRODUCTS
#include "codegen/nvptx/Passes.h.inc"

namespace {

using namespace mlir;
using namespace nvptx;

struct TensorCoreProducts : impl::TensorCoreProductsBase<TensorCoreProducts> {
  using TensorCoreProductsBase::TensorCoreProductsBase;

  /// The side of a block's tile of C for `product` (wgmma multiplies 64
  /// rows a warpgroup: its tiles are large always).
  int64_t tileFor(const Product &product) const {
    return wgmma ? kLargeTile : productTile(product, kLargeTile, kSmallTile, kFewBlocks);
  }

  void runOnOperation() override {
    std::vector<std::pair<Product, Format>> products;
    for (auto op : getOperation().getOps<linalg::GenericOp>()) {
      auto name = op->getAttrOfType<StringAttr>(kPrecisionAttr);
      std::optional<Precision> precision = name ? parsePrecision(name.getValue()) : std::nullopt;
      std::optional<Format> format = precision ? formatFor(*precision, fp8) : std::nullopt;
      if (!format)
        continue;
      if (std::optional<Product> product = matchProduct(op))
        products.push_back({*product, *format});
    }
    for (auto &[product, format] : products) {
      int64_t tile = tileFor(product);
      Fusion fusion = fuse(product);
      Location loc = fusedLocation(product, fusion);

      OpBuilder b(fusion.anchor);
      sizeLoops(b, loc, product);
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
      auto launch = createProductLaunch(b, loc, product, tile, kThreads);
      b.setInsertionPointToStart(&launch.getBody().front());
      KernelBuilder(b, loc, product, format, fusion, wgmma, tile, tmaA, tmaB).build(launch);
      eraseFused(product, fusion);
    }
  }
};

} // namespace
} // namespace kiln
