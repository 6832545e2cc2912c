//===- VectorizeContractions.cpp - register-tiled matrix products ---------===//
//
// Every contraction the kernel generators emit (Conv over im2col columns,
// Gemm, MatMul) reads
//
//   C[.., m, n] += A[.. m .. k ..] * B[.. k .., n]
//
// with one reduction dimension k, a dimension n innermost in both C and B,
// and a dimension m of C and A. Here each such f32 linalg.generic on buffers
// becomes loops over register tiles of `rows` rows by two vectors of
// columns: a tile's accumulators stay in vector registers for the whole
// reduction, each step loading two vectors of B, broadcasting `rows` scalars
// of A and issuing 2 x rows FMAs. Tiles at the edges are the same code with
// fewer rows and masked columns.
//
// The work is split into tasks, one per column tile and index of the other
// dimensions (batch, groups); each task runs every row tile of its columns,
// so the panel of B it reads stays in cache. Tasks write disjoint parts of C:
// they form an scf.forall, which kiln-outline-parallel hands to the
// runtime's threads, when the product is big enough to be worth it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {

#define GEN_PASS_DEF_VECTORIZECONTRACTIONS
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// Which loop of a contraction plays which part.
struct Roles {
  unsigned m, n, k;
  SmallVector<unsigned> outer;
};

bool isF32Buffer(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32();
}

bool lastStrideIsOne(Value value) {
  SmallVector<int64_t> strides;
  int64_t offset;
  auto type = cast<MemRefType>(value.getType());
  return type.getRank() > 0 && succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The body `out + in0 * in1` (either order of the addition).
bool isMultiplyAdd(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || yield.getValues().size() != 1 || yield.getValues()[0] != add)
    return false;
  Value in0 = body.getArgument(0), in1 = body.getArgument(1), out = body.getArgument(2);
  bool product = (mul.getLhs() == in0 && mul.getRhs() == in1) ||
                 (mul.getLhs() == in1 && mul.getRhs() == in0);
  bool sum = (add.getLhs() == out && add.getRhs() == mul) ||
             (add.getLhs() == mul && add.getRhs() == out);
  return product && sum;
}

std::optional<unsigned> dimAt(AffineMap map, int64_t result) {
  if (result < 0 || result >= int64_t(map.getNumResults()))
    return std::nullopt;
  if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(result)))
    return dim.getPosition();
  return std::nullopt;
}

/// The roles of `op`'s loops, when it is a contraction this pass tiles.
std::optional<Roles> analyze(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isMultiplyAdd(op))
    return std::nullopt;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  if (!isF32Buffer(a) || !isF32Buffer(b) || !isF32Buffer(c) || !lastStrideIsOne(b) ||
      !lastStrideIsOne(c))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    for (AffineExpr expr : map.getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(expr))
        return std::nullopt;
  AffineMap aMap = maps[0], bMap = maps[1], cMap = maps[2];

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> reductions;
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction)
      reductions.push_back(i);
  if (reductions.size() != 1)
    return std::nullopt;
  Roles roles;
  roles.k = reductions.front();
  std::optional<unsigned> n = dimAt(cMap, int64_t(cMap.getNumResults()) - 1);
  std::optional<unsigned> m = dimAt(cMap, int64_t(cMap.getNumResults()) - 2);
  if (!n || !m || dimAt(bMap, int64_t(bMap.getNumResults()) - 1) != n)
    return std::nullopt;
  roles.m = *m;
  roles.n = *n;
  auto uses = [](AffineMap map, unsigned dim) { return map.isFunctionOfDim(dim); };
  if (uses(aMap, roles.n) || uses(bMap, roles.m) || !uses(aMap, roles.m) ||
      !uses(aMap, roles.k) || !uses(bMap, roles.k) || uses(cMap, roles.k))
    return std::nullopt;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (i != roles.m && i != roles.n && i != roles.k)
      roles.outer.push_back(i);
  return roles;
}

/// Emits the tiled loops of one contraction at `op`, which it replaces.
class TileEmitter {
public:
  TileEmitter(linalg::GenericOp op, const Roles &roles, int64_t width, int64_t rows)
      : op(op), roles(roles), width(width), rows(rows), b(op), loc(op.getLoc()),
        maps(op.getIndexingMapsArray()), ranges(op.getStaticLoopRanges()),
        dims(ranges.size()) {}

  /// One task per (outer index, column tile): tasks write disjoint parts of
  /// C, so they run as an scf.forall when `parallel`, else as a loop.
  void emit(bool parallel) {
    int64_t columns = ranges[roles.n], step = 2 * width;
    int64_t columnTiles = llvm::divideCeil(columns, step);
    int64_t tasks = columnTiles;
    for (unsigned dim : roles.outer)
      tasks *= ranges[dim];
    Block *body;
    if (parallel) {
      auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tasks)},
                                          ValueRange{}, std::nullopt);
      body = forall.getBody();
    } else {
      body = scf::ForOp::create(b, loc, index(0), index(tasks), index(1)).getBody();
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(body->getTerminator());

    // task = ((outer_0 * extent_1 + outer_1) ...) * columnTiles + tile: each
    // index is a remainder, but the outermost, which is what remains.
    Value rest = body->getArgument(0);
    int64_t remaining = tasks;
    auto digit = [&](int64_t extent) {
      remaining /= extent;
      if (extent == 1)
        return index(0);
      if (remaining == 1)
        return rest;
      Value value = arith::RemUIOp::create(b, loc, rest, index(extent));
      rest = arith::DivUIOp::create(b, loc, rest, index(extent));
      return value;
    };
    Value tile = digit(columnTiles);
    for (unsigned dim : llvm::reverse(roles.outer))
      dims[dim] = digit(ranges[dim]);
    Value column = arith::MulIOp::create(b, loc, tile, index(step));
    auto rowTiles = [&](int64_t tileColumns) {
      forTiles(ranges[roles.m], rows, [&](Value row, int64_t tileRows) {
        emitTile(row, tileRows, column, tileColumns);
      });
    };
    int64_t last = columns - (columnTiles - 1) * step;
    if (columnTiles == 1 || last == step) {
      rowTiles(last);
      return;
    }
    Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tile,
                                         index(columnTiles - 1));
    auto branch = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/true);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    rowTiles(last);
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    rowTiles(step);
  }

private:
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  Value plus(Value base, int64_t offset) {
    return offset == 0 ? base : arith::AddIOp::create(b, loc, base, index(offset)).getResult();
  }

  /// The indices of an operand read through `map` at the current `dims`.
  SmallVector<Value> indices(AffineMap map) {
    SmallVector<Value> result;
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        result.push_back(dims[dim.getPosition()]);
      else
        result.push_back(index(cast<AffineConstantExpr>(expr).getValue()));
    }
    return result;
  }

  /// Calls `body(start, size)` for each tile of `step` along `extent`: a
  /// loop over the whole tiles, then the remainder.
  void forTiles(int64_t extent, int64_t step, llvm::function_ref<void(Value, int64_t)> body) {
    int64_t whole = extent / step * step;
    if (whole == step) {
      body(index(0), step);
    } else if (whole > 0) {
      auto loop = scf::ForOp::create(b, loc, index(0), index(whole), index(step));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      body(loop.getInductionVar(), step);
    }
    if (extent > whole)
      body(index(whole), extent - whole);
  }

  Value load(Value memref, AffineMap map, Value mask) {
    auto type = VectorType::get({width}, b.getF32Type());
    if (!mask)
      return vector::LoadOp::create(b, loc, type, memref, indices(map));
    Value zeros = arith::ConstantOp::create(b, loc, type,
                                            DenseElementsAttr::get(type, b.getF32FloatAttr(0)));
    return vector::MaskedLoadOp::create(b, loc, type, memref, indices(map), mask, zeros);
  }

  void store(Value value, Value memref, AffineMap map, Value mask) {
    if (mask)
      vector::MaskedStoreOp::create(b, loc, memref, indices(map), mask, value);
    else
      vector::StoreOp::create(b, loc, value, memref, indices(map));
  }

  /// One tile: `tileRows` rows from `row`, `columns` columns from `column`.
  void emitTile(Value row, int64_t tileRows, Value column, int64_t columns) {
    Value a = op.getDpsInputs()[0], bMatrix = op.getDpsInputs()[1], c = op.getDpsInits()[0];
    AffineMap aMap = maps[0], bMap = maps[1], cMap = maps[2];
    int64_t vectors = llvm::divideCeil(columns, width);
    SmallVector<Value> starts, masks;
    for (int64_t v = 0; v < vectors; ++v) {
      starts.push_back(plus(column, v * width));
      int64_t lanes = std::min(width, columns - v * width);
      masks.push_back(lanes == width
                          ? Value()
                          : vector::ConstantMaskOp::create(
                                b, loc, VectorType::get({width}, b.getI1Type()),
                                ArrayRef<int64_t>{lanes}));
    }
    SmallVector<Value> rowIndices;
    for (int64_t r = 0; r < tileRows; ++r)
      rowIndices.push_back(plus(row, r));

    // Accumulators, ordered row-major: (r, v) at r * vectors + v.
    SmallVector<Value> accumulators;
    for (int64_t r = 0; r < tileRows; ++r) {
      dims[roles.m] = rowIndices[r];
      for (int64_t v = 0; v < vectors; ++v) {
        dims[roles.n] = starts[v];
        accumulators.push_back(load(c, cMap, masks[v]));
      }
    }
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(ranges[roles.k]), index(1), accumulators,
        [&](OpBuilder &nested, Location, Value k, ValueRange current) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          dims[roles.k] = k;
          SmallVector<Value> panel;
          for (int64_t v = 0; v < vectors; ++v) {
            dims[roles.n] = starts[v];
            panel.push_back(load(bMatrix, bMap, masks[v]));
          }
          SmallVector<Value> next;
          for (int64_t r = 0; r < tileRows; ++r) {
            dims[roles.m] = rowIndices[r];
            Value scalar = memref::LoadOp::create(b, loc, a, indices(aMap));
            Value splat = vector::BroadcastOp::create(b, loc, panel.front().getType(), scalar);
            for (int64_t v = 0; v < vectors; ++v)
              next.push_back(vector::FMAOp::create(b, loc, splat, panel[v],
                                                   current[r * vectors + v]));
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t r = 0; r < tileRows; ++r) {
      dims[roles.m] = rowIndices[r];
      for (int64_t v = 0; v < vectors; ++v) {
        dims[roles.n] = starts[v];
        store(loop.getResult(r * vectors + v), c, cMap, masks[v]);
      }
    }
  }

  linalg::GenericOp op;
  const Roles &roles;
  int64_t width, rows;
  OpBuilder b;
  Location loc;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> ranges;
  /// The value of each loop dimension where code is being emitted.
  SmallVector<Value> dims;
};

struct VectorizeContractions : impl::VectorizeContractionsBase<VectorizeContractions> {
  using VectorizeContractionsBase::VectorizeContractionsBase;

  void runOnOperation() override {
    if (vectorBits != 128 && vectorBits != 256 && vectorBits != 512) {
      getOperation().emitError("kiln-vectorize-contractions: vector-bits must be 128, 256 or 512, not ")
          << int64_t(vectorBits);
      return signalPassFailure();
    }
    int64_t width = vectorBits / 32;
    // Two vectors of columns per row; the rows fill the vector registers
    // (16 below AVX-512, 32 with it) less the two B vectors and a broadcast.
    int64_t rows = vectorBits == 512 ? 12 : 6;
    SmallVector<std::pair<linalg::GenericOp, Roles>> work;
    // Below this many multiply-adds (some microseconds), handing tasks to
    // threads costs more than it saves.
    constexpr int64_t kParallelWork = 1 << 16;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Roles> roles = analyze(op))
        work.emplace_back(op, *roles);
    });
    for (auto &[op, roles] : work) {
      int64_t multiplyAdds = 1;
      for (int64_t extent : op.getStaticLoopRanges())
        multiplyAdds *= extent;
      TileEmitter(op, roles, width, rows).emit(multiplyAdds >= kParallelWork);
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
