//===- RegisterTiles.cpp - a host product as register tiles ---------------===//

#include "codegen/host/RegisterTiles.h"

#include "codegen/host/Panels.h"

#include "dialects/kiln/Precision.h"
#include "passes/Buffers.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::host {

namespace {

/// How many steps of the reduction ahead a register tile prefetches packed
/// weights.
constexpr int64_t kPrefetchSteps = 16;
/// The alignment of a task's panel: its vectors each lie in one cache line
/// (a 64-byte vector across two costs two accesses, every step).
constexpr int64_t kCacheLine = 64;
/// How many steps ahead a tile prefetches packed A (48 bytes a step).
constexpr int64_t kRowPrefetchSteps = 64;

/// Emits the tiled loops of one contraction, with the kernels `fusion`
/// joins to it, in place of them all: at the epilogue if there is one (the
/// buffers it writes and reads exist there), else at the product.
class TileEmitter : TileContext {
public:
  TileEmitter(linalg::GenericOp op, const Roles &roles, Fusion fusion, int64_t width, int64_t rows)
      : TileContext(op, roles, fusion, width,
                    OpBuilder(fusion.epilogue ? fusion.epilogue.getOperation() : op.getOperation()),
                    fusedLocation(op, fusion)),
        rows(rows) {
    assert((!roles.rowGroup || roles.rowGroup % rows == 0) &&
           "a tile's rows must lie in one group of packed A");
  }

  /// One task per (outer index, block of rows, column tile): tasks write
  /// disjoint parts of C, so they run as an scf.forall when `parallel`,
  /// else as a loop.
  void emit(bool parallel) {
    if (fusion.epilogue)
      prepareEpilogue();
    int64_t columns = ranges[roles.n], step = 2 * width;
    int64_t columnTiles = llvm::divideCeil(columns, step);
    int64_t blockRows = rowBlock();
    int64_t rowBlocks = ranges[roles.m] / blockRows;
    int64_t tasks = columnTiles * rowBlocks;
    for (unsigned dim : roles.outer)
      tasks *= ranges[dim];
    auto panelType = MemRefType::get({ranges[roles.k], step}, b.getF32Type());
    bool copies = copiesPanel();
    Block *body;
    Operation *kernel;
    if (parallel) {
      auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tasks)},
                                          ValueRange{}, std::nullopt);
      body = forall.getBody();
      kernel = forall;
      if (fusion.producer || copies) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(body);
        panel = memref::AllocaOp::create(b, loc, panelType, b.getI64IntegerAttr(kCacheLine));
      }
    } else {
      // A sequential kernel's panel is allocated once, before its loop.
      if (fusion.producer || copies)
        panel = memref::AllocaOp::create(b, loc, panelType, b.getI64IntegerAttr(kCacheLine));
      auto loop = scf::ForOp::create(b, loc, index(0), index(tasks), index(1));
      body = loop.getBody();
      kernel = loop;
    }
    kernel->setAttr(kKernelAttr, b.getStringAttr("matmul"));
    kernel->setAttr(kFlopsAttr, b.getI64IntegerAttr(contractionFlops(op)));
    for (StringRef name : {kPrecisionAttr, kLayoutAttr})
      if (Attribute value = op->getAttr(name))
        kernel->setAttr(name, value);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(body->getTerminator());

    // task = (((outer_0 * extent_1 + outer_1) ...) * rowBlocks + block) *
    // columnTiles + tile: each index is a remainder, but the outermost,
    // which is what remains. Consecutive tasks, which the threads take at
    // the same time, then take the next columns of the same rows. Where a
    // row of C is not a multiple of 64 bytes (196 floats at 14x14), those
    // share a cache line at every boundary, and the threads took it from
    // each other: there tile and block trade places, and consecutive tasks
    // write blocks of rows far apart (MobileNetV2's expanding 1x1
    // convolutions at 14x14, two threads: 0.060 to 0.045 ms).
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
    bool rowsFirst = columns * 4 % 64 != 0;
    Value block = rowsFirst ? digit(rowBlocks) : Value();
    Value tile = digit(columnTiles);
    if (!rowsFirst)
      block = digit(rowBlocks);
    Value firstRow = arith::MulIOp::create(b, loc, block, index(blockRows));
    for (unsigned dim : llvm::reverse(roles.outer))
      dims[dim] = digit(ranges[dim]);
    Value column = arith::MulIOp::create(b, loc, tile, index(step));
    auto rowTiles = [&](int64_t tileColumns) {
      if (fusion.producer)
        packPanel(*this, panel, column, tileColumns);
      else if (copies)
        copyPanel(*this, panel, column, tileColumns);
      forTiles(blockRows, rows, [&](Value row, int64_t tileRows) {
        emitTile(arith::AddIOp::create(b, loc, firstRow, row), tileRows, column, tileColumns);
      });
    };
    int64_t last = columns - (columnTiles - 1) * step;
    if (columnTiles == 1 || last == step) {
      rowTiles(last);
      return;
    }
    Value isLast =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tile, index(columnTiles - 1));
    auto branch = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/true);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    rowTiles(last);
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    rowTiles(step);
  }

private:
  static Location fusedLocation(linalg::GenericOp op, Fusion fusion) {
    SmallVector<Location> locations = {op.getLoc()};
    for (Operation *joined : {fusion.zeroFill.getOperation(), fusion.epilogue.getOperation(),
                              fusion.producer.getOperation()})
      if (joined)
        locations.push_back(joined->getLoc());
    return FusedLoc::get(op.getContext(), locations);
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

  /// The rows of C a task computes: all of them, or, for a product with
  /// many whole tiles of rows whose B is not computed per task (attention's
  /// scores, 1500 x 1500 a head), a block of 4 to 16 tiles that divides
  /// them: a task then writes rows near one another, rather than a column
  /// strip through all of C, a few cache lines on each of as many pages.
  int64_t rowBlock() {
    int64_t all = ranges[roles.m];
    int64_t tiles = all / rows;
    if (fusion.producer || all % rows != 0 || tiles < 32)
      return all;
    for (int64_t block : {8, 5, 10, 6, 12, 4, 16})
      if (tiles % block == 0)
        return block * rows;
    return all;
  }

  /// Whether each task copies its columns of B into a panel first: B is
  /// read by more than one tile of rows, and is neither packed nor
  /// computed per task. Its rows lie far apart (a row of an activation);
  /// the panel's are adjacent, on the task's stack, in cache for every
  /// tile after the first.
  bool copiesPanel() { return !fusion.producer && !roles.panel && ranges[roles.m] > rows; }

  /// The operands the epilogue reads along the columns, and its output,
  /// each seen with its column dimensions as one.
  void prepareEpilogue() {
    linalg::GenericOp epilogue = fusion.epilogue;
    SmallVector<AffineMap> epilogueMaps = epilogue.getIndexingMapsArray();
    for (OpOperand &operand : epilogue->getOpOperands()) {
      AffineMap map = epilogueMaps[operand.getOperandNumber()];
      auto isColumnDim = [&](AffineExpr e) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        return dim && int64_t(dim.getPosition()) >= fusion.split;
      };
      auto results = map.getResults();
      int64_t rowResults = llvm::find_if(results, isColumnDim) - results.begin();
      if (epilogue.isDpsInit(&operand) ||
          llvm::is_contained(fusion.epilogueInputs, operand.getOperandNumber()) ||
          rowResults == int64_t(results.size()))
        continue;
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i < rowResults; ++i)
        groups.push_back({i});
      groups.emplace_back(llvm::to_vector(llvm::seq<int64_t>(rowResults, results.size())));
      Value view = operand.get();
      if (groups.back().size() > 1)
        view = memref::CollapseShapeOp::create(b, loc, view, groups);
      columnViews[operand.getOperandNumber()] = {view, rowResults};
    }
    collapsedOutput = epilogue.getDpsInits()[0];
    int64_t rank = cast<MemRefType>(collapsedOutput.getType()).getRank();
    if (rank - fusion.split > 1) {
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i < fusion.split; ++i)
        groups.push_back({i});
      groups.emplace_back(llvm::to_vector(llvm::seq<int64_t>(fusion.split, rank)));
      collapsedOutput = memref::CollapseShapeOp::create(b, loc, collapsedOutput, groups);
    }
  }

  /// The epilogue at one row (`row`, the index of C's row dimension) and
  /// vector of columns from `start`, on the accumulator `value`; stores it.
  void emitEpilogue(Value value, ArrayRef<Value> rowDims, Value start, Value mask) {
    linalg::GenericOp epilogue = fusion.epilogue;
    Block &body = epilogue.getRegion().front();
    SmallVector<AffineMap> epilogueMaps = epilogue.getIndexingMapsArray();
    IRMapping mapping;
    for (OpOperand *input : epilogue.getDpsInputOperands()) {
      unsigned number = input->getOperandNumber();
      Value element;
      if (llvm::is_contained(fusion.epilogueInputs, number)) {
        element = value;
      } else if (auto found = columnViews.find(number); found != columnViews.end()) {
        auto [view, rowResults] = found->second;
        SmallVector<Value> at = indices(epilogueMaps[number].getSliceMap(0, rowResults), rowDims);
        at.push_back(start);
        element = load(view, at, mask);
      } else {
        Value scalar =
            memref::LoadOp::create(b, loc, input->get(), indices(epilogueMaps[number], rowDims));
        element = vector::BroadcastOp::create(b, loc, vectorType(b.getF32Type()), scalar);
      }
      mapping.map(body.getArgument(number), element);
    }
    Value result = cloneBodyOnVectors(b, loc, body, mapping, width)[0];
    SmallVector<Value> at(rowDims.take_front(fusion.split));
    at.push_back(start);
    store(result, collapsedOutput, at, mask);
  }

  /// The epilogue's row dimensions at row `row` of C (the others as `dims`).
  SmallVector<Value> epilogueRow() {
    // C's elements before this row, in columns: C is row-major, its last
    // dimension the columns.
    auto cType = cast<MemRefType>(op.getDpsInits()[0].getType());
    ArrayRef<int64_t> shape = cType.getShape();
    SmallVector<Value> at = indices(maps[2], dims);
    Value rowLinear = index(0);
    int64_t stride = 1;
    for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i) {
      Value term = stride == 1 ? at[i] : arith::MulIOp::create(b, loc, at[i], index(stride));
      rowLinear = arith::AddIOp::create(b, loc, rowLinear, term);
      stride *= shape[i];
    }
    ArrayRef<int64_t> epilogueShape =
        cast<MemRefType>(fusion.epilogue.getDpsInits()[0].getType()).getShape();
    return delinearize(rowLinear, epilogueShape.take_front(fusion.split));
  }

  /// Fetches the cache lines a tile's results go to, and those its
  /// epilogue reads along them (a residual), before its reduction: a tile
  /// of C far larger than the caches (ResNet's first stage writes 3 MiB a
  /// convolution) otherwise waits for each line at its end, rows apart.
  void prefetchResults(ArrayRef<Value> rowIndices, ArrayRef<Value> starts) {
    // One prefetch a 64-byte line.
    int64_t step = std::max<int64_t>(1, 16 / width);
    auto fetch = [&](Value memref, SmallVector<Value> at, bool isWrite) {
      memref::PrefetchOp::create(b, loc, memref, at, isWrite, /*localityHint=*/3,
                                 /*isDataCache=*/true);
    };
    SmallVector<AffineMap> epilogueMaps =
        fusion.epilogue ? fusion.epilogue.getIndexingMapsArray() : SmallVector<AffineMap>();
    for (Value row : rowIndices) {
      dims[roles.m] = row;
      SmallVector<Value> rowDims = fusion.epilogue ? epilogueRow() : SmallVector<Value>();
      for (size_t v = 0; v < starts.size(); v += step) {
        dims[roles.n] = starts[v];
        if (!fusion.epilogue) {
          // A tile that accumulates onto C loads it here anyway.
          if (fusion.zeroFill)
            fetch(op.getDpsInits()[0], indices(maps[2], dims), /*isWrite=*/true);
          continue;
        }
        SmallVector<Value> at(rowDims.begin(), rowDims.begin() + fusion.split);
        at.push_back(starts[v]);
        fetch(collapsedOutput, at, /*isWrite=*/true);
        for (auto &[number, found] : columnViews) {
          auto [view, rowResults] = found;
          SmallVector<Value> read =
              indices(epilogueMaps[number].getSliceMap(0, rowResults), rowDims);
          read.push_back(starts[v]);
          fetch(view, read, /*isWrite=*/false);
        }
      }
    }
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
                          : vector::ConstantMaskOp::create(b, loc, vectorType(b.getI1Type()),
                                                           ArrayRef<int64_t>{lanes}));
    }
    SmallVector<Value> rowIndices;
    for (int64_t r = 0; r < tileRows; ++r)
      rowIndices.push_back(plus(row, r));

    prefetchResults(rowIndices, starts);

    // Accumulators, ordered row-major: (r, v) at r * vectors + v.
    SmallVector<Value> accumulators;
    VectorType type = vectorType(b.getF32Type());
    Value zeros = fusion.zeroFill ? splat(b, loc, type, b.getF32FloatAttr(0)) : Value();
    for (int64_t r = 0; r < tileRows; ++r) {
      dims[roles.m] = rowIndices[r];
      for (int64_t v = 0; v < vectors; ++v) {
        dims[roles.n] = starts[v];
        accumulators.push_back(zeros ? zeros : load(c, indices(cMap, dims), masks[v]));
      }
    }
    // A packed B: the tile's columns lie in one panel (its width is a
    // multiple of the tile's).
    Value packedPanel, packedColumn;
    if (roles.panel) {
      packedPanel = arith::DivUIOp::create(b, loc, column, index(roles.panel));
      packedColumn = arith::RemUIOp::create(b, loc, column, index(roles.panel));
    }
    // A packed in row groups: the tile's rows lie in one group (its rows
    // are a multiple of the tile's), from the row's offset in it.
    SmallVector<Value> groupAt;
    Value groupOffset;
    if (roles.rowGroup) {
      int64_t results = aMap.getNumResults();
      groupAt = indices(aMap.getSliceMap(0, results - 3), dims);
      groupAt.push_back(arith::DivUIOp::create(b, loc, row, index(roles.rowGroup)));
      groupOffset = arith::RemUIOp::create(b, loc, row, index(roles.rowGroup));
    }
    auto reduction = scf::ForOp::create(
        b, loc, index(0), index(ranges[roles.k]), index(1), accumulators,
        [&](OpBuilder &nested, Location, Value k, ValueRange current) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          dims[roles.k] = k;
          SmallVector<Value> vectorsOfB;
          for (int64_t v = 0; v < vectors; ++v) {
            dims[roles.n] = starts[v];
            if (panel) {
              vectorsOfB.push_back(load(panel, {k, index(v * width)}, masks[v]));
            } else if (packedPanel) {
              vectorsOfB.push_back(
                  load(bMatrix, {packedPanel, k, plus(packedColumn, v * width)}, masks[v]));
              // Packed weights come from memory, not cache, once a run
              // holds more of them than the caches: fetch 16 steps ahead.
              memref::PrefetchOp::create(
                  b, loc, bMatrix,
                  ValueRange{packedPanel, plus(k, kPrefetchSteps), plus(packedColumn, v * width)},
                  /*isWrite=*/false, /*localityHint=*/3,
                  /*isDataCache=*/true);
            } else {
              vectorsOfB.push_back(load(bMatrix, indices(bMap, dims), masks[v]));
            }
          }
          if (groupOffset) {
            // Packed weights come from memory in one stream: fetch far
            // enough ahead to keep several lines of it in flight. Past the
            // group's last step this is the next group, the next tile's.
            SmallVector<Value> ahead = groupAt;
            ahead.append({plus(k, kRowPrefetchSteps), groupOffset});
            memref::PrefetchOp::create(b, loc, a, ahead, /*isWrite=*/false, /*localityHint=*/3,
                                       /*isDataCache=*/true);
          }
          SmallVector<Value> next;
          for (int64_t r = 0; r < tileRows; ++r) {
            dims[roles.m] = rowIndices[r];
            SmallVector<Value> at = groupAt;
            if (groupOffset)
              at.append({k, plus(groupOffset, r)});
            else
              at = indices(aMap, dims);
            Value scalar = memref::LoadOp::create(b, loc, a, at);
            Value splat = vector::BroadcastOp::create(b, loc, type, scalar);
            for (int64_t v = 0; v < vectors; ++v)
              next.push_back(
                  vector::FMAOp::create(b, loc, splat, vectorsOfB[v], current[r * vectors + v]));
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t r = 0; r < tileRows; ++r) {
      dims[roles.m] = rowIndices[r];
      SmallVector<Value> rowDims = fusion.epilogue ? epilogueRow() : SmallVector<Value>();
      for (int64_t v = 0; v < vectors; ++v) {
        dims[roles.n] = starts[v];
        Value result = reduction.getResult(r * vectors + v);
        if (fusion.epilogue)
          emitEpilogue(result, rowDims, starts[v], masks[v]);
        else
          store(result, c, indices(cMap, dims), masks[v]);
      }
    }
    // A long even reduction takes two steps an iteration: the loop's own
    // instructions count for less (a convolution of 128 to 256 channels at
    // 56x56 goes from 176 to 191 GFLOP/s, ResNet-50 from 60 to 56 ms; its
    // edge tiles of rows count too).
    int64_t steps = ranges[roles.k];
    if (steps >= 16 && steps % 2 == 0)
      (void)loopUnrollByFactor(reduction, 2);
  }

  /// Rows a tile.
  int64_t rows;
  /// The task's panel of B, when the producer of B is fused or B copied.
  Value panel;
  /// Per epilogue operand read along the columns: its view with the column
  /// dimensions as one, and how many row dimensions precede them.
  llvm::DenseMap<unsigned, std::pair<Value, int64_t>> columnViews;
  /// The epilogue's output, its column dimensions as one.
  Value collapsedOutput;
};

} // namespace

void emitRegisterTiles(linalg::GenericOp op, const Roles &roles, const Fusion &fusion,
                       int64_t width, int64_t rows, bool parallel) {
  TileEmitter(op, roles, fusion, width, rows).emit(parallel);
}

} // namespace kiln::host
