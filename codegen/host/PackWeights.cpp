// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- PackWeights.cpp - constant product operands in register-tile order -===//
//
// A register tile of a product reads, each step k of the reduction, a row
// of B across its columns and a column of A down its rows. Constant
// operands (weights) are laid out at compile time in exactly that order:
//
// - B, a constant K x N matrix (a MatMul's or Gemm's weights): in its own
//   layout a task's panel has rows N floats apart, which for the N of
//   transformer layers (768, 3072) fall in a handful of cache sets and
//   evict each other from L1 and L2 on every pass. Packed as
//   B'[N / P][K][P] (P columns a panel, zeros past N), a task's panel is
//   one contiguous block that streams from cache.
// - A, a constant M x K matrix (a convolution's weights): a tile of R rows
//   broadcasts one element of each of its rows a step, R streams K floats
//   apart. Packed as A'[M / R][K][R] (zeros past M), the tile reads one
//   contiguous stream that the hardware prefetches.
//
// P is the x86-64-v4 register tiles' width (two 16-float vectors) and R
// their rows (12), so the packed weights are the same bytes for every host
// level: x86-64-v3's tiles of 16 columns read half a panel, its tiles of
// 6 rows half a row group, and the plans still share their weights.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Buffers.h"
#include "codegen/host/Passes.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Weights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace kiln {

#define GEN_PASS_DEF_PACKWEIGHTS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// Whether `op` is a product C += A * B over one reduction loop.
bool isProduct(linalg::GenericOp op) {
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 && op.getNumReductionLoops() == 1 &&
         isMultiplyAdd(op);
}

/// The product's loops that B's rows and columns run along, when `op` is
/// an f32 product C[.., m, n] += A[.., m, .., k, ..] * B[k, n] with B a
/// constant matrix.
struct ConstantB {
  arith::ConstantOp constant;
  unsigned k, n;
};

std::optional<ConstantB> constantB(linalg::GenericOp op) {
  if (!isProduct(op))
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

/// The constant behind `value` and the reshapes between them (reshapes
/// keep the order of the elements).
arith::ConstantOp constantThroughReshapes(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      value = op->getOperand(0);
    else
      return dyn_cast<arith::ConstantOp>(op);
  }
  return {};
}

/// Where A's rows and reduction are among its dimensions, when `op` is an
/// f32 product C[.., m, n] += A[.., m, k] * B[.., k, n] with A a constant
/// (seen through reshapes) read at loop dimensions only.
struct ConstantA {
  arith::ConstantOp constant;
  unsigned m, k;
};

std::optional<ConstantA> constantA(linalg::GenericOp op) {
  if (!isProduct(op))
    return std::nullopt;
  Value a = op.getDpsInputs()[0];
  arith::ConstantOp constant = constantThroughReshapes(a);
  auto type = dyn_cast<RankedTensorType>(a.getType());
  if (!constant || !type || type.getRank() < 2 || !type.hasStaticShape() ||
      !type.getElementType().isF32() || !isa<ElementsAttr>(constant.getValue()))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap aMap = maps[0], cMap = maps[2];
  if (!aMap.isProjectedPermutation() || cMap.getNumResults() < 2)
    return std::nullopt;
  auto m = dyn_cast<AffineDimExpr>(cMap.getResult(cMap.getNumResults() - 2));
  auto k = dyn_cast<AffineDimExpr>(aMap.getResult(aMap.getNumResults() - 1));
  if (!m || !k || aMap.getResult(aMap.getNumResults() - 2) != m ||
      op.getIteratorTypesArray()[k.getPosition()] != utils::IteratorType::reduction)
    return std::nullopt;
  return ConstantA{constant, m.getPosition(), k.getPosition()};
}

/// Erases `value`'s defining reshapes and constant as they fall dead.
void eraseDeadChain(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!op->use_empty())
      return;
    value = op->getNumOperands() ? op->getOperand(0) : Value();
    op->erase();
    if (!value)
      return;
  }
}

struct PackWeights : impl::PackWeightsBase<PackWeights> {
  using PackWeightsBase::PackWeightsBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, ConstantB>> products;
    SmallVector<std::pair<linalg::GenericOp, ConstantA>> rowProducts;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<ConstantB> b = constantB(op))
        products.push_back({op, *b});
      else if (std::optional<ConstantA> a = constantA(op))
        rowProducts.push_back({op, *a});
    });
    for (auto [op, a] : rowProducts)
      packRows(op, a);
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

  /// Replaces A[.., m, k] (M x K at the end) by A'[.., M / R, K, R], read
  /// as A'[.., m floordiv R, k, m mod R].
  void packRows(linalg::GenericOp op, ConstantA a) {
    const int64_t rows = rowGroup;
    auto type = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = type.getRank(), extentM = shape[rank - 2], extentK = shape[rank - 1];
    // One tile of rows reads one stream already.
    if (extentM <= rows)
      return;
    auto value = cast<ElementsAttr>(a.constant.getValue());
    std::optional<std::vector<float>> values = readF32(value);
    if (!values)
      return;
    int64_t groups = llvm::divideCeil(extentM, rows);
    int64_t outer = type.getNumElements() / (extentM * extentK);
    std::vector<float> packed(size_t(outer * groups * extentK * rows), 0.0f);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t m = 0; m < extentM; ++m)
        for (int64_t k = 0; k < extentK; ++k)
          packed[size_t(((o * groups + m / rows) * extentK + k) * rows + m % rows)] =
              (*values)[size_t((o * extentM + m) * extentK + k)];
    SmallVector<int64_t> packedShape(shape.drop_back(2));
    packedShape.append({groups, extentK, rows});
    auto packedType = RankedTensorType::get(packedShape, type.getElementType());
    // At the weights, not the product: nothing joins what lay between them.
    OpBuilder builder(a.constant);
    auto packedConstant = arith::ConstantOp::create(
        builder, a.constant.getLoc(), makeF32(packedType, packed, derivedName(value, "rows")));

    MLIRContext *context = &getContext();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<AffineExpr> results(maps[0].getResults().drop_back(2));
    AffineExpr m = getAffineDimExpr(a.m, context), k = getAffineDimExpr(a.k, context);
    results.append({m.floorDiv(rows), k, m % rows});
    maps[0] = AffineMap::get(op.getNumLoops(), 0, results, context);
    Value old = op.getDpsInputs()[0];
    op.setIndexingMapsAttr(builder.getAffineMapArrayAttr(maps));
    op->setOperand(0, packedConstant);
    eraseDeadChain(old);
  }
};

} // namespace
} // namespace kiln
