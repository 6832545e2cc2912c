// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- RegisterTiles.cpp - a host product as register tiles ---------------===//

#include "codegen/host/RegisterTiles.h"

#include "codegen/host/Panels.h"

#include "codegen/common/Buffers.h"
#include "codegen/common/Passes.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
/// How many tasks keep a few threads evenly busy: a product with fewer
/// column tiles splits its rows into blocks.
constexpr int64_t kTasks = 8;
/// The fewest whole tiles of rows in such a block, whose task builds its
/// own panel of B: a copy, or a gather of a convolution's windows, which
/// costs more. (ResNet-50's last 3x3 convolutions copy 590 KB a panel: in
/// blocks of 5 tiles they took 10 to 20% longer on one thread.)
constexpr int64_t kBlockTiles = 8;
constexpr int64_t kGatheredBlockTiles = 16;
/// How much of a copied panel of B a task fills with tiles of columns
/// (L1 holds 48 KiB), and the most tiles it takes.
constexpr int64_t kPanelBytes = 32 * 1024;
constexpr int64_t kTaskTiles = 8;
/// How many tasks ahead a tile of a copied panel fetches B's columns, into
/// L2: each row of B is a stream of its own (256 rows 12.5 KB apart for
/// ResNet-50's first stage), more than the hardware's prefetchers follow,
/// so a panel's copy waited on memory for every line.
constexpr int64_t kCopyTasksAhead = 2;
/// How many FMAs a tile's columns summed across its rows keep in flight:
/// two pipes of four cycles' latency.
constexpr int64_t kAcrossChains = 8;

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
    // Columns a run gives (attention's keys): a tile of them a task, the
    // last masked to what is left.
    bool runColumns = ShapedType::isDynamic(columns);
    // A run may give the rows (m) and the outer extents (a batch): tiles
    // of rows then run to the run's rows, and the tasks are counted from
    // the run's batch.
    bool runRows = ShapedType::isDynamic(ranges[roles.m]);
    OpFoldResult rowExtent = extent(roles.m);
    bool copies = copiesPanel();
    int64_t taskColumns =
        runColumns ? step : step * tilesPerTask(llvm::divideCeil(columns, step), copies);
    int64_t columnTasks = runColumns ? 1 : llvm::divideCeil(columns, taskColumns);
    OpFoldResult columnExtent = extent(roles.n);
    OpFoldResult runColumnTasks =
        runColumns ? OpFoldResult(
                         arith::CeilDivUIOp::create(b, loc, value(columnExtent), index(taskColumns))
                             .getResult())
                   : b.getIndexAttr(columnTasks);
    int64_t otherTasks = columnTasks;
    SmallVector<OpFoldResult> outerExtents;
    bool runOuter = false;
    for (unsigned dim : roles.outer) {
      outerExtents.push_back(extent(dim));
      if (ShapedType::isDynamic(ranges[dim]))
        runOuter = true;
      else
        otherTasks *= ranges[dim];
    }
    int64_t wholeTiles = runRows ? 0 : ranges[roles.m] / rows;
    int64_t blockTiles = runRows ? 0 : rowBlock(runOuter ? kTasks : otherTasks, parallel);
    int64_t rowBlocks = blockTiles ? llvm::divideCeil(wholeTiles, blockTiles) : 1;
    OpFoldResult tasks = b.getIndexAttr(otherTasks * rowBlocks);
    if (runColumns)
      tasks = arith::MulIOp::create(b, loc, value(tasks), value(runColumnTasks)).getResult();
    for (auto [dim, outer] : llvm::zip(roles.outer, outerExtents))
      if (ShapedType::isDynamic(ranges[dim]))
        tasks = arith::MulIOp::create(b, loc, value(tasks), value(outer)).getResult();
    auto panelType = MemRefType::get({ranges[roles.k], taskColumns}, b.getF32Type());
    Block *body;
    Operation *kernel;
    if (parallel) {
      auto forall =
          scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{tasks}, ValueRange{}, std::nullopt);
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
      auto loop = scf::ForOp::create(b, loc, index(0), value(tasks), index(1));
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
    // columnTasks + tile: each index is a remainder, but the outermost,
    // which is what remains. Consecutive tasks, which the threads take at
    // the same time, then take the next columns of the same rows. Where a
    // row of C is not a multiple of 64 bytes (196 floats at 14x14), those
    // share a cache line at every boundary, and the threads took it from
    // each other: there tile and block trade places, and consecutive tasks
    // write blocks of rows far apart (MobileNetV2's expanding 1x1
    // convolutions at 14x14, two threads: 0.060 to 0.045 ms).
    bool rowsFirst = !runColumns && columns * 4 % 64 != 0;
    if (copies && !rowsFirst)
      copyAhead = kCopyTasksAhead * taskColumns;
    SmallVector<OpFoldResult> digits;
    if (rowsFirst)
      digits.push_back(b.getIndexAttr(rowBlocks));
    digits.push_back(runColumnTasks);
    if (!rowsFirst)
      digits.push_back(b.getIndexAttr(rowBlocks));
    llvm::append_range(digits, llvm::reverse(outerExtents));
    Value rest = body->getArgument(0);
    size_t next = 0;
    auto digit = [&] {
      OpFoldResult extent = digits[next++];
      auto isOne = [](OpFoldResult e) { return isConstantIntValue(e, 1); };
      if (isOne(extent))
        return index(0);
      if (llvm::all_of(ArrayRef(digits).drop_front(next), isOne))
        return rest;
      Value value = arith::RemUIOp::create(b, loc, rest, this->value(extent));
      rest = arith::DivUIOp::create(b, loc, rest, this->value(extent));
      return value;
    };
    Value block = rowsFirst ? digit() : Value();
    Value tile = digit();
    if (!rowsFirst)
      block = digit();
    for (unsigned dim : llvm::reverse(roles.outer))
      dims[dim] = digit();
    Value column = arith::MulIOp::create(b, loc, tile, index(taskColumns));
    // The columns left from `column` when a run gives them.
    Value left = runColumns ? arith::SubIOp::create(b, loc, value(columnExtent), column).getResult()
                            : Value();
    auto rowTiles = [&](int64_t tileColumns) {
      if (fusion.producer)
        packPanel(*this, panel, column, tileColumns, left);
      else if (copies)
        copyPanel(*this, panel, column, tileColumns);
      // The task's tiles in a row of tiles, from its first column.
      auto emitTiles = [&](Value row, int64_t tileRows) {
        if (runColumns) {
          panelColumn = index(0);
          emitTile(row, tileRows, column, step, left);
          return;
        }
        forTiles(tileColumns, step, [&](Value offset, int64_t size) {
          panelColumn = offset;
          emitTile(row, tileRows, arith::AddIOp::create(b, loc, column, offset), size);
        });
      };
      if (runRows) {
        forRunTiles(value(rowExtent), rows, emitTiles);
        return;
      }
      if (rowBlocks == 1) {
        forTiles(ranges[roles.m], rows, emitTiles);
        return;
      }
      // The block's whole tiles, then, in the last block, the rows past
      // them.
      Value first = arith::MulIOp::create(b, loc, block, index(blockTiles));
      Value end = arith::AddIOp::create(b, loc, first, index(blockTiles));
      if (wholeTiles % blockTiles != 0)
        end = arith::MinUIOp::create(b, loc, end, index(wholeTiles));
      auto loop = scf::ForOp::create(b, loc, first, end, index(1));
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(loop.getBody()->getTerminator());
        emitTiles(arith::MulIOp::create(b, loc, loop.getInductionVar(), index(rows)), rows);
      }
      int64_t edge = ranges[roles.m] - wholeTiles * rows;
      if (edge == 0)
        return;
      Value isLast =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, block, index(rowBlocks - 1));
      auto branch = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      emitTiles(index(wholeTiles * rows), edge);
    };
    // A task's columns where a run gives them: a tile, the last masked.
    int64_t last = runColumns ? taskColumns : columns - (columnTasks - 1) * taskColumns;
    if (runColumns || columnTasks == 1 || last == taskColumns) {
      rowTiles(last);
      return;
    }
    Value isLast =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tile, index(columnTasks - 1));
    auto branch = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/true);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    rowTiles(last);
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    rowTiles(taskColumns);
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

  /// forTiles along an `extent` a run gives: a loop over the whole tiles,
  /// then the rows past them as tiles of 8, 4, 2 and 1 rows (those smaller
  /// than `step`), each where the remainder has its bit. A few tile shapes
  /// serve every remainder, and a run of one row (a decoder's token) is
  /// one tile of one row.
  void forRunTiles(Value extent, int64_t step, llvm::function_ref<void(Value, int64_t)> body) {
    Value whole = arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, extent, index(step)),
                                        index(step));
    auto loop = scf::ForOp::create(b, loc, index(0), whole, index(step));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      body(loop.getInductionVar(), step);
    }
    Value left = arith::SubIOp::create(b, loc, extent, whole);
    for (int64_t part = int64_t(llvm::PowerOf2Ceil(uint64_t(step))) / 2; part >= 1; part /= 2) {
      Value bit = arith::AndIOp::create(b, loc, left, index(part));
      Value has = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit, index(0));
      auto branch = scf::IfOp::create(b, loc, has, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      // After the parts larger than this one.
      Value before = arith::AndIOp::create(b, loc, left, index(~(2 * part - 1)));
      body(arith::AddIOp::create(b, loc, whole, before), part);
    }
  }

  /// How many whole tiles of rows a task computes, when not all rows
  /// (0). Two kinds of product take blocks of rows:
  ///   - one with many whole tiles of rows whose B is not computed per task
  ///     (attention's scores, 1500 x 1500 a head): a block of 4 to 16
  ///     tiles that divides them. A task then writes rows near one another,
  ///     rather than a column strip through all of C, a few cache lines on
  ///     each of as many pages;
  ///   - one that would be too few tasks (`otherTasks`) to keep threads
  ///     evenly busy (ResNet-50's last stages: 2 and 7 column tiles): the
  ///     rows split into blocks of at least `kBlockTiles` tiles
  ///     (`kGatheredBlockTiles` where B is gathered) until there are about
  ///     `kTasks` tasks.
  int64_t rowBlock(int64_t otherTasks, bool parallel) {
    int64_t all = ranges[roles.m];
    int64_t tiles = all / rows;
    if (!fusion.producer && all % rows == 0 && tiles >= 32)
      for (int64_t block : {8, 5, 10, 6, 12, 4, 16})
        if (tiles % block == 0)
          return block;
    if (!parallel || otherTasks >= kTasks)
      return 0;
    int64_t fewest = fusion.producer ? kGatheredBlockTiles : kBlockTiles;
    int64_t blocks = std::min<int64_t>(llvm::divideCeil(kTasks, otherTasks), tiles / fewest);
    return blocks > 1 ? llvm::divideCeil(tiles, blocks) : 0;
  }

  /// How many of the `columnTiles` tiles of columns a task computes: one,
  /// or, where B is copied and its rows are few (a 1x1 convolution of 64
  /// channels), as many as fill `kPanelBytes` of panel, as long as that
  /// leaves `kTasks` tasks. A tile of rows then writes each row of C in a
  /// run of several tiles: fewer, longer streams of C (ResNet-50's first
  /// stage writes 256 rows 12.5 KB apart).
  int64_t tilesPerTask(int64_t columnTiles, bool copies) {
    if (!copies)
      return 1;
    int64_t fit = kPanelBytes / (ranges[roles.k] * 2 * width * 4);
    return std::max<int64_t>(1, std::min({fit, kTaskTiles, columnTiles / kTasks}));
  }

  /// Whether each task copies its columns of B into a panel first: B is
  /// read by more than one tile of rows, and is neither packed nor
  /// computed per task. Its rows lie far apart (a row of an activation);
  /// the panel's are adjacent, on the task's stack, in cache for every
  /// tile after the first.
  /// A reduction a run gives (attention's keys) reads B where it lies: a
  /// panel's size would be the run's.
  bool copiesPanel() {
    return !fusion.producer && !roles.panel && !ShapedType::isDynamic(ranges[roles.k]) &&
           !ShapedType::isDynamic(ranges[roles.n]) &&
           (ShapedType::isDynamic(ranges[roles.m]) || ranges[roles.m] > rows);
  }

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
    auto cType = cast<MemRefType>(op.getDpsInits()[0].getType());
    ArrayRef<int64_t> shape = cType.getShape();
    SmallVector<Value> at = indices(maps[2], dims);
    // Row dimensions of the same shape (which sizes a run gives need):
    // C's own.
    ArrayRef<int64_t> epilogueShape =
        cast<MemRefType>(fusion.epilogue.getDpsInits()[0].getType()).getShape();
    if (epilogueShape.take_front(fusion.split) == shape.drop_back())
      return SmallVector<Value>(ArrayRef(at).drop_back());
    // C's elements before this row, in columns: C is row-major, its last
    // dimension the columns.
    Value rowLinear = index(0);
    int64_t stride = 1;
    for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i) {
      Value term = stride == 1 ? at[i] : arith::MulIOp::create(b, loc, at[i], index(stride));
      rowLinear = arith::AddIOp::create(b, loc, rowLinear, term);
      stride *= shape[i];
    }
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

  /// One tile: `tileRows` rows from `row`, `columns` columns from `column`,
  /// or with `left` (columns a run gives) as many of them as are left.
  void emitTile(Value row, int64_t tileRows, Value column, int64_t columns, Value left = Value()) {
    int64_t vectors = llvm::divideCeil(columns, width);
    SmallVector<Value> starts, masks;
    for (int64_t v = 0; v < vectors; ++v) {
      starts.push_back(plus(column, v * width));
      int64_t lanes = std::min(width, columns - v * width);
      if (left) {
        masks.push_back(leftMask(left, v * width));
        continue;
      }
      masks.push_back(lanes == width ? Value() : laneMask(lanes));
    }
    SmallVector<Value> rowIndices;
    for (int64_t r = 0; r < tileRows; ++r)
      rowIndices.push_back(plus(row, r));

    prefetchResults(rowIndices, starts);

    // A packed B: the tile's columns lie in one panel (its width is a
    // multiple of the tile's).
    if (roles.panel) {
      packedPanel = arith::DivUIOp::create(b, loc, column, index(roles.panel));
      packedColumn = arith::RemUIOp::create(b, loc, column, index(roles.panel));
    }
    // A packed in row groups: the tile's rows lie in one group (its rows
    // are a multiple of the tile's), from the row's offset in it.
    groupAt.clear();
    groupOffset = Value();
    if (roles.rowGroup) {
      AffineMap aMap = maps[0];
      int64_t results = aMap.getNumResults();
      dims[roles.m] = row;
      groupAt = indices(aMap.getSliceMap(0, results - 3), dims);
      groupAt.push_back(arith::DivUIOp::create(b, loc, row, index(roles.rowGroup)));
      groupOffset = arith::RemUIOp::create(b, loc, row, index(roles.rowGroup));
    }

    // A few columns past the last whole vector (4 of 196 at 14x14, 1 of 49
    // at 7x7) would each take a vector of FMAs per row and step, almost
    // all lanes masked. Where A is packed in row groups, the tile's rows
    // of A are one vector a step: those columns are summed across the rows
    // instead, an FMA per column and step.
    across = Across();
    int64_t rest = left ? 0 : columns % width;
    if (rest != 0 && groupOffset && fusion.zeroFill && tileRows <= width && 2 * rest <= tileRows) {
      across.columns = rest;
      across.offset = (vectors - 1) * width;
      across.start = starts.back();
      across.rowMask = tileRows == width ? Value() : laneMask(tileRows);
    }
    int64_t along = across.columns ? vectors - 1 : vectors;
    SmallVector<Value> sums =
        along ? sumAlongRows(rowIndices, starts, masks, along) : sumAcrossRows();
    SmallVector<Value> restOfRows;
    if (across.columns)
      restOfRows = rowsOfColumns(ArrayRef<Value>(sums).take_back(rest), tileRows);

    for (int64_t r = 0; r < tileRows; ++r) {
      dims[roles.m] = rowIndices[r];
      SmallVector<Value> rowDims = fusion.epilogue ? epilogueRow() : SmallVector<Value>();
      for (int64_t v = 0; v < vectors; ++v) {
        dims[roles.n] = starts[v];
        Value result = v < along ? sums[r * along + v] : restOfRows[r];
        if (fusion.epilogue)
          emitEpilogue(result, rowDims, starts[v], masks[v]);
        else
          store(result, op.getDpsInits()[0], indices(maps[2], dims), masks[v]);
      }
    }
    // A long even reduction takes two steps an iteration: the loop's own
    // instructions count for less (a convolution of 128 to 256 channels at
    // 56x56 goes from 176 to 191 GFLOP/s, ResNet-50 from 60 to 56 ms; its
    // edge tiles of rows count too). Last, as it may replace the loops.
    int64_t steps = ranges[roles.k];
    for (scf::ForOp reduction : std::exchange(reductions, {}))
      if (!ShapedType::isDynamic(steps) && steps >= 16 && steps % 2 == 0)
        (void)loopUnrollByFactor(reduction, 2);
  }

  /// Prefetches packed A `kRowPrefetchSteps` steps past `k`: weights come
  /// from memory in one stream, so enough lines of it must be in flight.
  /// Past the group's last step this is the next group, the next tile's.
  void prefetchGroup(Value k) {
    SmallVector<Value> ahead = groupAt;
    ahead.append({plus(k, kRowPrefetchSteps), groupOffset});
    memref::PrefetchOp::create(b, loc, op.getDpsInputs()[0], ahead, /*isWrite=*/false,
                               /*localityHint=*/3, /*isDataCache=*/true);
  }

  /// Fetches the columns of B a task `kCopyTasksAhead` later copies into
  /// its panel, at the reduction's current step, into L2: a line each step
  /// and 64 bytes of the tile's columns. Every tile of the task fetches
  /// them; after the first, they are in cache and cost a load slot, which
  /// a step has to spare. Past B's last column, this is the next row's.
  void prefetchCopy(ArrayRef<Value> starts) {
    for (size_t v = 0; v < starts.size(); v += std::max<int64_t>(1, 16 / width)) {
      dims[roles.n] = plus(starts[v], copyAhead);
      memref::PrefetchOp::create(b, loc, op.getDpsInputs()[1], indices(maps[1], dims),
                                 /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
    }
  }

  /// The tile's first `vectors` vectors of columns (from `starts`), each
  /// row's accumulators in registers for the whole reduction: a step loads
  /// the vectors of B and broadcasts each row's element of A. Returns the
  /// sums row-major, (r, v) at r * vectors + v, then those of the columns
  /// `across` sums in the same steps.
  SmallVector<Value> sumAlongRows(ArrayRef<Value> rowIndices, ArrayRef<Value> starts,
                                  ArrayRef<Value> masks, int64_t vectors) {
    Value a = op.getDpsInputs()[0], c = op.getDpsInits()[0];
    int64_t tileRows = rowIndices.size();
    SmallVector<Value> accumulators;
    VectorType type = vectorType(b.getF32Type());
    Value zeros = fusion.zeroFill ? this->zeros() : Value();
    for (int64_t r = 0; r < tileRows; ++r) {
      dims[roles.m] = rowIndices[r];
      for (int64_t v = 0; v < vectors; ++v) {
        dims[roles.n] = starts[v];
        accumulators.push_back(zeros ? zeros : load(c, indices(maps[2], dims), masks[v]));
      }
    }
    accumulators.append(across.columns, zeros);
    auto reduction = scf::ForOp::create(
        b, loc, index(0), value(extent(roles.k)), index(1), accumulators,
        [&](OpBuilder &nested, Location, Value k, ValueRange current) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          dims[roles.k] = k;
          SmallVector<Value> vectorsOfB;
          for (int64_t v = 0; v < vectors; ++v) {
            auto [memref, at] = placeOfB(k, v * width, starts[v]);
            vectorsOfB.push_back(load(memref, at, masks[v]));
            // Packed weights come from memory, not cache, once a run holds
            // more of them than the caches: fetch 16 steps ahead.
            if (packedPanel) {
              at[1] = plus(k, kPrefetchSteps);
              memref::PrefetchOp::create(b, loc, memref, at, /*isWrite=*/false,
                                         /*localityHint=*/3, /*isDataCache=*/true);
            }
          }
          if (groupOffset)
            prefetchGroup(k);
          if (copyAhead)
            prefetchCopy(starts.take_front(vectors));
          SmallVector<Value> next;
          for (int64_t r = 0; r < tileRows; ++r) {
            dims[roles.m] = rowIndices[r];
            SmallVector<Value> at = groupAt;
            if (groupOffset)
              at.append({k, plus(groupOffset, r)});
            else
              at = indices(maps[0], dims);
            Value scalar = memref::LoadOp::create(b, loc, a, at);
            Value splat = vector::BroadcastOp::create(b, loc, type, scalar);
            for (int64_t v = 0; v < vectors; ++v)
              next.push_back(
                  vector::FMAOp::create(b, loc, splat, vectorsOfB[v], current[r * vectors + v]));
          }
          if (across.columns)
            llvm::append_range(next, acrossStep(k, current.take_back(across.columns)));
          scf::YieldOp::create(b, loc, next);
        });
    reductions.push_back(reduction);
    return SmallVector<Value>(reduction.getResults());
  }

  /// Where the tile reads B's element at step `k` and column `offset` of
  /// the tile (`start` in B): the task's panel, packed B, or B itself.
  std::pair<Value, SmallVector<Value>> placeOfB(Value k, int64_t offset, Value start) {
    if (panel)
      return {panel, {k, plus(panelColumn, offset)}};
    Value bMatrix = op.getDpsInputs()[1];
    if (packedPanel)
      return {bMatrix, {packedPanel, k, plus(packedColumn, offset)}};
    dims[roles.k] = k;
    dims[roles.n] = start;
    return {bMatrix, indices(maps[1], dims)};
  }

  /// One step of the sums of the columns `across` takes, onto `current`
  /// (one a column): the rows' elements of packed A as one vector, times
  /// each column's element of B.
  SmallVector<Value> acrossStep(Value k, ValueRange current) {
    Value a = op.getDpsInputs()[0];
    dims[roles.k] = k;
    SmallVector<Value> at = groupAt;
    at.append({k, groupOffset});
    Value rowsOfA = load(a, at, across.rowMask);
    SmallVector<Value> next;
    for (int64_t j = 0; j < across.columns; ++j) {
      auto [memref, at] = placeOfB(k, across.offset + j, plus(across.start, j));
      Value scalar = memref::LoadOp::create(b, loc, memref, at);
      Value splat = vector::BroadcastOp::create(b, loc, rowsOfA.getType(), scalar);
      next.push_back(vector::FMAOp::create(b, loc, rowsOfA, splat, current[j]));
    }
    return next;
  }

  /// The sums of the columns `across` takes, for a tile with no whole
  /// vector of columns. On their own an FMA's latency would bound each
  /// step: each column sums in `kAcrossChains / columns` chains of steps,
  /// added at the end. Returns one sum a column.
  SmallVector<Value> sumAcrossRows() {
    int64_t rest = across.columns;
    Value zeros = this->zeros();
    // Chain c takes the steps c, c + chains, ...; the steps past the last
    // whole round go to chain 0.
    int64_t chains = llvm::divideCeil(kAcrossChains, rest);
    int64_t steps = ranges[roles.k], whole = steps / chains * chains;
    auto rounds = scf::ForOp::create(
        b, loc, index(0), index(whole), index(chains), SmallVector<Value>(rest * chains, zeros),
        [&](OpBuilder &nested, Location, Value k, ValueRange current) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          SmallVector<Value> next;
          for (int64_t c = 0; c < chains; ++c) {
            // Packed A comes from memory: fetch ahead, as the rows' tiles do.
            prefetchGroup(plus(k, c));
            llvm::append_range(next, acrossStep(plus(k, c), current.slice(c * rest, rest)));
          }
          scf::YieldOp::create(b, loc, next);
        });
    SmallVector<Value> sums(rounds.getResults().take_front(rest));
    if (whole < steps) {
      auto last = scf::ForOp::create(b, loc, index(whole), index(steps), index(1), sums,
                                     [&](OpBuilder &nested, Location, Value k, ValueRange current) {
                                       OpBuilder::InsertionGuard guard(b);
                                       b.setInsertionPoint(nested.getInsertionBlock(),
                                                           nested.getInsertionPoint());
                                       scf::YieldOp::create(b, loc, acrossStep(k, current));
                                     });
      sums.assign(last.getResults().begin(), last.getResults().end());
    }
    for (int64_t c = 1; c < chains; ++c)
      for (int64_t j = 0; j < rest; ++j)
        sums[j] = arith::AddFOp::create(b, loc, sums[j], rounds.getResult(c * rest + j));
    return sums;
  }

  /// Lane r of column j's sum (`sums`, one a column) is row r's: gathers
  /// them into one vector a row, column j at lane j.
  SmallVector<Value> rowsOfColumns(ArrayRef<Value> sums, int64_t tileRows) {
    Value zeros = this->zeros();
    SmallVector<Value> rowSums;
    for (int64_t r = 0; r < tileRows; ++r) {
      Value sum = zeros;
      for (auto [j, column] : llvm::enumerate(sums)) {
        Value lane = vector::ExtractOp::create(b, loc, column, r);
        sum = vector::InsertOp::create(b, loc, lane, sum, j);
      }
      rowSums.push_back(sum);
    }
    return rowSums;
  }

  /// The columns a tile sums across its rows, rather than along them: how
  /// many (none if 0), from which column of its panel and of B, and the
  /// mask of the tile's rows in a vector.
  struct Across {
    int64_t columns = 0;
    int64_t offset = 0;
    Value start;
    Value rowMask;
  };

  /// Rows a tile.
  int64_t rows;
  /// The task's panel of B, when the producer of B is fused or B copied,
  /// and the column of it where the current tile's columns start.
  Value panel, panelColumn;
  /// How many columns past a tile's the tile fetches B's for a later task's
  /// copied panel (0: none).
  int64_t copyAhead = 0;
  /// Where a tile's columns of a packed B lie: the panel, the column in it.
  Value packedPanel, packedColumn;
  /// Where a tile's rows of A packed in row groups lie: the indices up to
  /// the group's, and the first row's offset in the group.
  SmallVector<Value> groupAt;
  Value groupOffset;
  /// The current tile's columns summed across its rows.
  Across across;
  /// The tile's reduction loops, unrolled once its code is complete.
  SmallVector<scf::ForOp> reductions;
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
