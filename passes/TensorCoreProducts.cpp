//===- TensorCoreProducts.cpp - products as mma.sync kernels --------------===//
//
// Each product (a linalg contraction on buffers: C += A * B over batch, row,
// column and one reduction loop) that reads tf32, fp16 or bf16 (or fp8 on
// sm_89 and later) becomes a gpu.launch whose warps multiply on NVIDIA
// tensor cores with mma.sync:
//
//   - a block of 4 warps computes a 64x64 tile of C; each warp 32x32, as
//     2x4 mma tiles of 16x8, accumulating in fp32 registers;
//   - the reduction advances 8 (tf32), 16 (fp16, bf16) or 32 (fp8) at a
//     time; each thread loads its fragments of A and B straight from global
//     memory, as the PTX ISA lays fragments out, reading zeros past the
//     edges;
//   - C is read first (it holds the product's initial value) and written
//     once at the end, within bounds.
//
// The operands hold values already rounded to the format (kiln-assign-
// precision did that), so packing them into registers is exact. An fp8
// operand holds E4M3 values times its scale (kiln.scales): the kernel
// divides the scales out as it packs, and multiplies the accumulators by
// both when it stores them.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Precision.h"
#include "passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {

#define GEN_PASS_DEF_TENSORCOREPRODUCTS
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

constexpr int64_t kWarpTileM = 2, kWarpTileN = 4; // mma tiles per warp
constexpr int64_t kBlockM = 64, kBlockN = 64, kThreads = 128;

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
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return std::nullopt;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return std::nullopt;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || yield.getValues().size() != 1 || yield.getValues()[0] != add.getResult())
    return std::nullopt;
  Value in0 = body.getArgument(0), in1 = body.getArgument(1), out = body.getArgument(2);
  if (!((mul.getLhs() == in0 && mul.getRhs() == in1) || (mul.getLhs() == in1 && mul.getRhs() == in0)))
    return std::nullopt;
  if (!((add.getLhs() == out && add.getRhs() == mul) || (add.getRhs() == out && add.getLhs() == mul)))
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

/// How an mma.sync instruction reads its operands for one format.
struct Format {
  Precision precision;
  int64_t k;                 ///< the reduction per instruction
  int64_t perRegister;       ///< A and B elements per 32-bit register
  NVVM::MMATypes type;       ///< for nvvm.mma.sync (fp8 goes through PTX)
};

std::optional<Format> formatFor(Precision precision, bool fp8) {
  switch (precision) {
  case Precision::TF32: return Format{precision, 8, 1, NVVM::MMATypes::tf32};
  case Precision::FP16: return Format{precision, 16, 2, NVVM::MMATypes::f16};
  case Precision::BF16: return Format{precision, 16, 2, NVVM::MMATypes::bf16};
  case Precision::FP8:
    if (fp8)
      return Format{precision, 32, 4, NVVM::MMATypes::e4m3};
    return std::nullopt;
  default: return std::nullopt;
  }
}

/// Builds the kernel body; `b` is inside the launch.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const Product &product, const Format &format)
      : b(b), loc(loc), p(product), f(format) {}

  void build(gpu::LaunchOp launch) {
    Value tid = launch.getThreadIds().x;
    Value warp = div(tid, 32), lane = rem(tid, 32);
    Value group = div(lane, 4), inGroup = rem(lane, 4);
    Value rowBase = add(mul(launch.getBlockIds().x, kBlockM), mul(div(warp, 2), 32));
    Value colBase = add(mul(launch.getBlockIds().y, kBlockN), mul(rem(warp, 2), 32));
    batchIndex = decompose(launch.getBlockIds().z, p.batch, p.numBatch);

    // The rows this thread reads of A and writes of C (g and g + 8 of each
    // mma tile), and the columns it reads of B (g) and writes of C (2t, 2t+1).
    for (int64_t i = 0; i < kWarpTileM; ++i)
      for (int64_t half = 0; half < 2; ++half)
        rows.push_back(position(add(rowBase, add(group, constant(16 * i + 8 * half))),
                                p.rows, p.numRows));
    for (int64_t j = 0; j < kWarpTileN; ++j) {
      colsB.push_back(position(add(colBase, add(group, constant(8 * j))), p.cols, p.numCols));
      for (int64_t e = 0; e < 2; ++e)
        colsC.push_back(position(add(colBase, add(mul(inGroup, 2), constant(8 * j + e))), p.cols,
                                 p.numCols));
    }

    // The accumulators start from C (over both scales for fp8, whose
    // products are of unscaled E4M3 values).
    float scale = p.scaleA * p.scaleB;
    SmallVector<Value> init;
    for (int64_t i = 0; i < kWarpTileM; ++i)
      for (int64_t j = 0; j < kWarpTileN; ++j)
        for (int64_t r = 0; r < 4; ++r)
          init.push_back(scaled(loadC(i, j, r), 1.0f / scale));
    int64_t depth = p.ranges[p.k];
    auto loop = scf::ForOp::create(b, loc, constant(0), constant(depth), constant(f.k), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value k0 = loop.getInductionVar();
      SmallVector<SmallVector<Value>> fragA, fragB;
      for (int64_t i = 0; i < kWarpTileM; ++i)
        fragA.push_back(loadA(i, k0, inGroup));
      for (int64_t j = 0; j < kWarpTileN; ++j)
        fragB.push_back(loadB(j, k0, inGroup));
      SmallVector<Value> next;
      Type f32 = b.getF32Type();
      Type resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
      for (int64_t i = 0; i < kWarpTileM; ++i)
        for (int64_t j = 0; j < kWarpTileN; ++j) {
          ValueRange acc = loop.getRegionIterArgs().slice((i * kWarpTileN + j) * 4, 4);
          Value d = f.precision == Precision::FP8
                        ? mmaFP8(resultType, fragA[i], fragB[j], acc)
                        : NVVM::MmaOp::create(
                              b, loc, resultType, fragA[i], fragB[j], acc, {16, 8, f.k},
                              std::nullopt, std::nullopt,
                              std::array<NVVM::MMATypes, 2>{f.type, f.type},
                              std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                             NVVM::MMALayout::col})
                              .getResult();
          for (int64_t r = 0; r < 4; ++r)
            next.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{r}));
        }
      scf::YieldOp::create(b, loc, next);
    }
    for (int64_t i = 0; i < kWarpTileM; ++i)
      for (int64_t j = 0; j < kWarpTileN; ++j)
        for (int64_t r = 0; r < 4; ++r)
          storeC(i, j, r, scaled(loop.getResult((i * kWarpTileN + j) * 4 + r), scale));
    gpu::TerminatorOp::create(b, loc);
  }

private:
  /// A flattened index along some loops: each loop's index (clamped to the
  /// last, so every load is in bounds) and whether it is inside.
  struct Position {
    SmallVector<std::pair<unsigned, Value>> dims;
    Value valid;
  };

  Value constant(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value mul(Value l, int64_t r) { return arith::MulIOp::create(b, loc, l, constant(r)); }
  Value div(Value l, int64_t r) { return arith::DivUIOp::create(b, loc, l, constant(r)); }
  Value rem(Value l, int64_t r) { return arith::RemUIOp::create(b, loc, l, constant(r)); }
  Value lessThan(Value l, int64_t r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, l, constant(r));
  }
  Value both(Value l, Value r) { return arith::AndIOp::create(b, loc, l, r); }
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
  SmallVector<std::pair<unsigned, Value>> decompose(Value flat, ArrayRef<unsigned> loops,
                                                    int64_t total) {
    SmallVector<std::pair<unsigned, Value>> indices;
    int64_t stride = total;
    for (unsigned loop : loops) {
      stride /= p.ranges[loop];
      indices.push_back({loop, rem(div(flat, stride), p.ranges[loop])});
    }
    return indices;
  }

  Position position(Value flat, ArrayRef<unsigned> loops, int64_t total) {
    Value valid = lessThan(flat, total);
    Value clamped = arith::MinUIOp::create(b, loc, flat, constant(total - 1));
    return {decompose(clamped, loops, total), valid};
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

  /// A's or B's element at (`along`, k) over `scale`, 0 outside.
  Value load(Value memref, AffineMap map, const Position &along, Value k, float scale) {
    int64_t depth = p.ranges[p.k];
    Value valid = both(along.valid, lessThan(k, depth));
    Value clampedK = arith::MinUIOp::create(b, loc, k, constant(depth - 1));
    SmallVector<std::pair<unsigned, Value>> known(batchIndex);
    known.append(along.dims);
    known.push_back({p.k, clampedK});
    Value value = scaled(memref::LoadOp::create(b, loc, memref, indicesOf(map, known)),
                         1.0f / scale);
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    return arith::SelectOp::create(b, loc, valid, value, zero);
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
  /// four holds the t-th such run of each 128-bit line (k/2 elements).

  /// A's fragment of mma tile `i`: registers a0..a3 hold rows g, g+8, g,
  /// g+8, the first two from the first half of the k step, the others from
  /// the second.
  SmallVector<Value> loadA(int64_t i, Value k0, Value t) {
    SmallVector<Value> registers;
    for (int64_t r = 0; r < 4; ++r) {
      const Position &row = rows[i * 2 + r % 2];
      SmallVector<Value> elements;
      for (int64_t e = 0; e < f.perRegister; ++e) {
        Value column = add(mul(t, f.perRegister), constant(f.k / 2 * (r / 2) + e));
        elements.push_back(load(p.a, p.mapA, row, add(k0, column), p.scaleA));
      }
      registers.push_back(pack(elements));
    }
    return registers;
  }

  /// B's fragment of mma tile `j`: column g; registers b0 and b1 hold the
  /// first and second half of the k step.
  SmallVector<Value> loadB(int64_t j, Value k0, Value t) {
    SmallVector<Value> registers;
    for (int64_t r = 0; r < 2; ++r) {
      SmallVector<Value> elements;
      for (int64_t e = 0; e < f.perRegister; ++e) {
        Value row = add(mul(t, f.perRegister), constant(f.k / 2 * r + e));
        elements.push_back(load(p.b, p.mapB, colsB[j], add(k0, row), p.scaleB));
      }
      registers.push_back(pack(elements));
    }
    return registers;
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

  Value loadC(int64_t i, int64_t j, int64_t r) {
    auto [row, col] = placeOfC(i, j, r);
    Value value = memref::LoadOp::create(b, loc, p.c, indicesOfC(row, col));
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    return arith::SelectOp::create(b, loc, both(row.valid, col.valid), value, zero);
  }

  void storeC(int64_t i, int64_t j, int64_t r, Value value) {
    auto [row, col] = placeOfC(i, j, r);
    auto inside = scf::IfOp::create(b, loc, both(row.valid, col.valid), /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(inside.thenBlock());
    memref::StoreOp::create(b, loc, value, p.c, indicesOfC(row, col));
  }

  OpBuilder &b;
  Location loc;
  const Product &p;
  const Format &f;
  SmallVector<std::pair<unsigned, Value>> batchIndex;
  SmallVector<Position> rows, colsB, colsC;
};

struct TensorCoreProducts : impl::TensorCoreProductsBase<TensorCoreProducts> {
  using TensorCoreProductsBase::TensorCoreProductsBase;

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
      OpBuilder b(product.op);
      Location loc = product.op.getLoc();
      auto size = [&](int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); };
      Value one = size(1);
      // Rows on x, which allows the most blocks.
      auto launch = gpu::LaunchOp::create(
          b, loc, size(llvm::divideCeil(product.numRows, kBlockM)),
          size(llvm::divideCeil(product.numCols, kBlockN)), size(product.numBatch),
          size(kThreads), one, one);
      b.setInsertionPointToStart(&launch.getBody().front());
      KernelBuilder(b, loc, product, format).build(launch);
      product.op.erase();
    }
  }
};

} // namespace
} // namespace kiln
