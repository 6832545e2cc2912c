//===- PackWeights.cpp - constant B operands in register-tile panels ------===//
//
// A product whose B is a constant K x N matrix (a MatMul's or Gemm's
// weights) reads, in each task, a panel of B: every row k, a tile of
// columns. In B's own layout the panel's rows lie N floats apart, so for
// the N of transformer layers (768, 3072) they fall in a handful of cache
// sets and evict each other from L1 and L2 on every pass. Packed at compile
// time as B'[N / P][K][P] (P columns a panel, zeros past N), a task's panel
// is one contiguous block that streams from cache.
//
// P is the x86-64-v4 register tiles' width (two 16-float vectors), so the
// packed weights are the same bytes for every host level: x86-64-v3's tiles
// of 16 columns read half a panel, and the plans still share their weights.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"
#include "dialects/kiln/Weights.h"
#include "passes/Buffers.h"

namespace kiln {

#define GEN_PASS_DEF_PACKWEIGHTS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// The product's loops that B's rows and columns run along, when `op` is
/// an f32 product C[.., m, n] += A[.., m, .., k, ..] * B[k, n] with B a
/// constant matrix.
struct ConstantB {
  arith::ConstantOp constant;
  unsigned k, n;
};

std::optional<ConstantB> constantB(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      !isMultiplyAdd(op))
    return std::nullopt;
  auto constant = op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (!constant || !type || type.getRank() != 2 || !type.getElementType().isF32() ||
      !isa<ElementsAttr>(constant.getValue()))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap aMap = maps[0], bMap = maps[1], cMap = maps[2];
  auto k = dyn_cast<AffineDimExpr>(bMap.getResult(0));
  auto n = dyn_cast<AffineDimExpr>(bMap.getResult(1));
  auto cLast = dyn_cast<AffineDimExpr>(cMap.getResults().back());
  if (!k || !n || !cLast || cLast != n ||
      op.getIteratorTypesArray()[k.getPosition()] != utils::IteratorType::reduction ||
      aMap.isFunctionOfDim(n.getPosition()))
    return std::nullopt;
  return ConstantB{constant, k.getPosition(), n.getPosition()};
}

struct PackWeights : impl::PackWeightsBase<PackWeights> {
  using PackWeightsBase::PackWeightsBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, ConstantB>> products;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<ConstantB> b = constantB(op))
        products.push_back({op, *b});
    });
    const int64_t width = panelWidth;
    for (auto [op, b] : products) {
      auto type = cast<RankedTensorType>(b.constant.getType());
      int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
      // A product narrower than a panel gains nothing.
      if (columns <= width)
        continue;
      auto value = cast<ElementsAttr>(b.constant.getValue());
      std::optional<std::vector<float>> values = readF32(value);
      if (!values)
        continue;
      int64_t panels = llvm::divideCeil(columns, width);
      std::vector<float> packed(size_t(panels * rows * width), 0.0f);
      for (int64_t k = 0; k < rows; ++k)
        for (int64_t n = 0; n < columns; ++n)
          packed[size_t((n / width * rows + k) * width + n % width)] =
              (*values)[size_t(k * columns + n)];
      auto packedType = RankedTensorType::get({panels, rows, width}, type.getElementType());
      OpBuilder builder(op);
      auto packedConstant = arith::ConstantOp::create(
          builder, b.constant.getLoc(), makeF32(packedType, packed, derivedName(value, "packed")));

      // B'[n floordiv P, k, n mod P] is B[k, n].
      MLIRContext *context = &getContext();
      unsigned loops = op.getNumLoops();
      AffineExpr k = getAffineDimExpr(b.k, context), n = getAffineDimExpr(b.n, context);
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[1] = AffineMap::get(loops, 0, {n.floorDiv(width), k, n % width}, context);
      op.setIndexingMapsAttr(builder.getAffineMapArrayAttr(maps));
      op->setOperand(1, packedConstant);
      if (b.constant->use_empty())
        b.constant->erase();
    }
  }
};

} // namespace
} // namespace kiln
