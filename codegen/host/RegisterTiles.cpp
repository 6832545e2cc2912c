//===- RegisterTiles.cpp - a host product as register tiles ---------------===//

#include "codegen/host/RegisterTiles.h"

#include "codegen/host/LaneEmitter.h"
#include "codegen/host/VectorBody.h"

#include "dialects/kiln/Precision.h"
#include "passes/Buffers.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln::host {

namespace {

/// How many steps of the reduction ahead a register tile prefetches packed
/// weights.
constexpr int64_t kPrefetchSteps = 16;

/// Emits the tiled loops of one contraction, with the kernels `fusion`
/// joins to it, in place of them all: at the epilogue if there is one (the
/// buffers it writes and reads exist there), else at the product.
class TileEmitter {
public:
  TileEmitter(linalg::GenericOp op, const Roles &roles, Fusion fusion, int64_t width, int64_t rows)
      : op(op), roles(roles), fusion(fusion), width(width), rows(rows),
        b(fusion.epilogue ? fusion.epilogue.getOperation() : op.getOperation()),
        loc(fusedLocation()), maps(op.getIndexingMapsArray()), ranges(op.getStaticLoopRanges()),
        dims(ranges.size()) {}

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
        panel = memref::AllocaOp::create(b, loc, panelType);
      }
    } else {
      // A sequential kernel's panel is allocated once, before its loop.
      if (fusion.producer || copies)
        panel = memref::AllocaOp::create(b, loc, panelType);
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
    // which is what remains.
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
    Value firstRow = arith::MulIOp::create(b, loc, digit(rowBlocks), index(blockRows));
    for (unsigned dim : llvm::reverse(roles.outer))
      dims[dim] = digit(ranges[dim]);
    Value column = arith::MulIOp::create(b, loc, tile, index(step));
    auto rowTiles = [&](int64_t tileColumns) {
      if (fusion.producer)
        pack(column, tileColumns);
      else if (copies)
        copyPanel(column, tileColumns);
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
  Location fusedLocation() {
    SmallVector<Location> locations = {op.getLoc()};
    for (Operation *joined : {fusion.zeroFill.getOperation(), fusion.epilogue.getOperation(),
                              fusion.producer.getOperation()})
      if (joined)
        locations.push_back(joined->getLoc());
    return FusedLoc::get(op.getContext(), locations);
  }

  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  Value plus(Value base, int64_t offset) {
    return offset == 0 ? base : arith::AddIOp::create(b, loc, base, index(offset)).getResult();
  }

  /// The indices of an operand read through `map` at `at` (the loop
  /// dimensions' values).
  SmallVector<Value> indices(AffineMap map, ArrayRef<Value> at) {
    return indicesAt(b, loc, map, at);
  }

  SmallVector<Value> delinearize(Value value, ArrayRef<int64_t> extents) {
    return kiln::delinearize(b, loc, value, extents);
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

  /// Emits `body(value)` inside a loop over [0, extent).
  void loop(int64_t extent, llvm::function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, index(0), index(extent), index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    body(forOp.getInductionVar());
  }

  VectorType vectorType(Type element) { return VectorType::get({width}, element); }

  Value load(Value memref, ValueRange at, Value mask) {
    return loadLanes(b, loc, vectorType(b.getF32Type()), memref, at, mask);
  }

  void store(Value value, Value memref, ValueRange at, Value mask) {
    storeLanes(b, loc, value, memref, at, mask);
  }

  /// The rows of C a task computes: all of them, or, for a product with
  /// many whole tiles of rows whose B is not computed per task (attention's
  /// scores, 1500 x 1500 a head), a block of 4 to 16 tiles that divides
  /// them: a task then writes rows near one another, rather than a column
  /// strip through all of C, a few cache lines on each of as many pages.
  /// Consecutive tasks take the next columns of the same rows.
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

  /// Copies the task's columns [column, column + tileColumns) of every row
  /// k of B into its panel.
  void copyPanel(Value column, int64_t tileColumns) {
    Value bMatrix = op.getDpsInputs()[1];
    loop(ranges[roles.k], [&](Value k) {
      dims[roles.k] = k;
      for (int64_t v = 0; v * width < tileColumns; ++v) {
        int64_t lanes = std::min(width, tileColumns - v * width);
        Value mask = lanes == width
                         ? Value()
                         : vector::ConstantMaskOp::create(b, loc, vectorType(b.getI1Type()),
                                                          ArrayRef<int64_t>{lanes});
        dims[roles.n] = plus(column, v * width);
        store(load(bMatrix, indices(maps[1], dims), mask), panel, {k, index(v * width)}, mask);
      }
    });
  }

  /// Computes the task's panel of B, columns [column, column + tileColumns)
  /// of every row k, with the producer's body at each element.
  void pack(Value column, int64_t tileColumns) {
    linalg::GenericOp producer = fusion.producer;
    ArrayRef<int64_t> shape = cast<MemRefType>(producer.getDpsInits()[0].getType()).getShape();
    AffineMap bMap = maps[1];
    int64_t kResult = *bMap.getResultPosition(b.getAffineDimExpr(roles.k));
    int64_t nResult = bMap.getNumResults() - 1;
    SmallVector<Value> at(shape.size());
    auto assign = [&](int64_t result, Value value) {
      SmallVector<int64_t> extents;
      for (int64_t dim : fusion.groups[result])
        extents.push_back(shape[dim]);
      for (auto [dim, digit] : llvm::zip(fusion.groups[result], delinearize(value, extents)))
        at[dim] = digit;
    };
    for (Value &value : at)
      value = index(0);
    for (int64_t result = 0; result < nResult; ++result) {
      if (result == kResult)
        continue;
      AffineExpr expr = bMap.getResult(result);
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        assign(result, dims[dim.getPosition()]);
      else
        assign(result, index(cast<AffineConstantExpr>(expr).getValue()));
    }
    if (shiftedRows(column, tileColumns, at))
      return;
    ArrayRef<int64_t> kGroup = fusion.groups[kResult];
    // The reduction's producer dimensions, as nested loops; `emit(k)` in
    // the innermost.
    auto rows = [&](llvm::function_ref<void(Value)> emit) {
      std::function<void(size_t, Value)> nest = [&](size_t level, Value k) {
        if (level == kGroup.size()) {
          emit(k);
          return;
        }
        int64_t dim = kGroup[level];
        loop(shape[dim], [&](Value value) {
          at[dim] = value;
          Value scaled = arith::MulIOp::create(b, loc, k, index(shape[dim]));
          nest(level + 1, arith::AddIOp::create(b, loc, scaled, value));
        });
      };
      nest(0, index(0));
    };
    if (producerRunsAlongRows()) {
      // Runs of columns along the innermost column dimension (a row of an
      // image), each from column p over the next columns of that row, up
      // to a vector's lanes: the producer's body on those lanes, its
      // inputs read as vectors.
      int64_t innermost = fusion.groups[nResult].back();
      Value end = plus(column, tileColumns);
      scf::WhileOp::create(
          b, loc, TypeRange{b.getIndexType()}, ValueRange{column},
          [&](OpBuilder &nested, Location, ValueRange p) {
            Value more = arith::CmpIOp::create(nested, loc, arith::CmpIPredicate::slt, p[0], end);
            scf::ConditionOp::create(nested, loc, more, p);
          },
          [&](OpBuilder &nested, Location, ValueRange p) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
            assign(nResult, p[0]);
            Value rowLeft = arith::SubIOp::create(b, loc, index(shape[innermost]), at[innermost]);
            Value tileLeft = arith::SubIOp::create(b, loc, end, p[0]);
            Value lanes = arith::MinSIOp::create(
                b, loc, arith::MinSIOp::create(b, loc, rowLeft, tileLeft), index(width));
            Value offset = arith::SubIOp::create(b, loc, p[0], column);
            Value mask =
                vector::CreateMaskOp::create(b, loc, vectorType(b.getI1Type()), ValueRange{lanes});
            rows([&](Value k) {
              Value value = emitOnLanes(producer, width, b, *producerVaries, at, mask, lanes);
              storeLanes(b, loc, value, panel, ValueRange{k, offset}, mask);
            });
            scf::YieldOp::create(b, loc, ValueRange{arith::AddIOp::create(b, loc, p[0], lanes)});
          });
      return;
    }
    if (producerRunsOnLanes()) {
      // A vector of columns at a time: the column dimensions' indices lane
      // by lane, the body on vectors, its loads gathers.
      SmallVector<int64_t> extents;
      for (int64_t dim : fusion.groups[nResult])
        extents.push_back(shape[dim]);
      // Indices lane by lane are 32-bit (producerRunsOnLanes checks they
      // fit): twice the lanes of 64-bit ones a register.
      VectorType lanesType = vectorType(b.getI32Type());
      Value first = vector::BroadcastOp::create(
          b, loc, lanesType, arith::IndexCastOp::create(b, loc, b.getI32Type(), column));
      for (int64_t v = 0; v * width < tileColumns; ++v) {
        int64_t lanes = std::min(width, tileColumns - v * width);
        Value mask = vector::ConstantMaskOp::create(b, loc, vectorType(b.getI1Type()),
                                                    ArrayRef<int64_t>{lanes});
        // Lane j is column `column + v * width + j`.
        SmallVector<int64_t> offsets = llvm::to_vector(llvm::seq(v * width, (v + 1) * width));
        Value columns = arith::AddIOp::create(
            b, loc, first,
            arith::ConstantOp::create(b, loc, lanesType,
                                      b.getI32VectorAttr(llvm::to_vector_of<int32_t>(offsets))));
        for (auto [dim, digit] : llvm::zip(fusion.groups[nResult], delinearize(columns, extents)))
          at[dim] = digit;
        rows([&](Value k) {
          vector::StoreOp::create(b, loc, producerLanes(at, mask), panel,
                                  ValueRange{k, index(v * width)});
        });
      }
      return;
    }
    loop(tileColumns, [&](Value j) {
      assign(nResult, arith::AddIOp::create(b, loc, column, j));
      rows([&](Value k) {
        memref::StoreOp::create(b, loc, producerValue(at), panel, ValueRange{k, j});
      });
    });
  }

  /// The panel of an im2col gather whose rows are the input shifted
  /// (kIm2colShiftAttr): row (c, kh, kw) of a vector of columns is one
  /// masked vector load of the input at the columns' first position moved
  /// by (kh - top) * width + kw - left, the mask the lanes whose window
  /// lies inside the input at (kh, kw), computed once a task. Whether it
  /// applies (columns [n, g, c, kh, kw, oh, ow] of an input [N, C, H, W]).
  bool shiftedRows(Value column, int64_t tileColumns, ArrayRef<Value> at) {
    linalg::GenericOp producer = fusion.producer;
    auto shift = producer->getAttrOfType<DenseI64ArrayAttr>(kIm2colShiftAttr);
    ArrayRef<int64_t> shape = cast<MemRefType>(producer.getDpsInits()[0].getType()).getShape();
    auto loads = producer.getRegion().front().getOps<memref::LoadOp>();
    ArrayRef<SmallVector<int64_t>> groups = fusion.groups;
    // B's rows are (c, kh, kw), with batch and group when they are 1; its
    // columns (oh, ow).
    if (!shift || shape.size() != 7 || groups.size() != 4 || groups[3] != ArrayRef<int64_t>{5, 6} ||
        groups[2].size() < 3 || ArrayRef(groups[2]).take_back(3) != ArrayRef<int64_t>{2, 3, 4} ||
        !llvm::all_of(ArrayRef(groups[2]).drop_back(3), [&](int64_t d) { return shape[d] == 1; }) ||
        !llvm::hasSingleElement(loads))
      return false;
    Value input = (*loads.begin()).getMemRef();
    auto inputType = cast<MemRefType>(input.getType());
    // Lane offsets are 32-bit, as the gathers' elsewhere.
    if (inputType.getRank() != 4 || !memref::isStaticShapeAndContiguousRowMajor(inputType) ||
        inputType.getNumElements() >= (int64_t(1) << 31) || shape[3] * shape[4] > 25)
      return false;
    int64_t channels = shape[2], windowRows = shape[3], windowColumns = shape[4];
    int64_t height = inputType.getDimSize(2), inputWidth = inputType.getDimSize(3);
    int64_t outputWidth = shape[6], plane = height * inputWidth;
    int64_t total = inputType.getNumElements();
    int64_t top = shift[0], left = shift[1];
    SmallVector<ReassociationIndices> all = {{0, 1, 2, 3}};
    Value flat = memref::CollapseShapeOp::create(b, loc, input, all);
    VectorType lanesType = vectorType(b.getI32Type());
    VectorType maskType = vectorType(b.getI1Type());
    auto lanesOf = [&](int64_t value) {
      return splat(b, loc, lanesType, b.getI32IntegerAttr(int32_t(value)));
    };
    auto within = [&](Value value, int64_t end) {
      Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, value, lanesOf(0));
      Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, value, lanesOf(end));
      return arith::AndIOp::create(b, loc, low, high).getResult();
    };
    // Per vector of columns: its first position and the mask of each
    // window offset.
    int64_t vectors = llvm::divideCeil(tileColumns, width);
    SmallVector<Value> firsts;
    SmallVector<SmallVector<Value>> masks(vectors);
    Value steps = arith::ConstantOp::create(
        b, loc, lanesType,
        b.getI32VectorAttr(llvm::to_vector(llvm::seq<int32_t>(0, int32_t(width)))));
    for (int64_t v = 0; v < vectors; ++v) {
      Value first = plus(column, v * width);
      firsts.push_back(first);
      Value positions = arith::AddIOp::create(
          b, loc,
          vector::BroadcastOp::create(b, loc, lanesType,
                                      arith::IndexCastOp::create(b, loc, b.getI32Type(), first)),
          steps);
      Value outputRow = arith::DivUIOp::create(b, loc, positions, lanesOf(outputWidth));
      Value outputColumn = arith::RemUIOp::create(b, loc, positions, lanesOf(outputWidth));
      Value lanes = vector::ConstantMaskOp::create(
          b, loc, maskType, ArrayRef<int64_t>{std::min(width, tileColumns - v * width)});
      for (int64_t kh = 0; kh < windowRows; ++kh) {
        Value rowInside =
            within(arith::AddIOp::create(b, loc, outputRow, lanesOf(kh - top)), height);
        rowInside = arith::AndIOp::create(b, loc, rowInside, lanes);
        for (int64_t kw = 0; kw < windowColumns; ++kw)
          masks[v].push_back(arith::AndIOp::create(
              b, loc, rowInside,
              within(arith::AddIOp::create(b, loc, outputColumn, lanesOf(kw - left)), inputWidth)));
      }
    }
    // The input's channel c of this batch index and group.
    Value channel0 = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, at[0], index(inputType.getDimSize(1))),
        arith::MulIOp::create(b, loc, at[1], index(channels)));
    VectorType type = vectorType(b.getF32Type());
    Value zeros = splat(b, loc, type, b.getF32FloatAttr(0));
    loop(channels, [&](Value c) {
      Value planeStart =
          arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, channel0, c), index(plane));
      for (int64_t kh = 0; kh < windowRows; ++kh)
        for (int64_t kw = 0; kw < windowColumns; ++kw) {
          Value k = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, c, index(windowRows * windowColumns)),
              index(kh * windowColumns + kw));
          for (int64_t v = 0; v < vectors; ++v) {
            Value mask = masks[v][kh * windowColumns + kw];
            Value offset = plus(arith::AddIOp::create(b, loc, planeStart, firsts[v]),
                                (kh - top) * inputWidth + kw - left);
            // A vector that would start before the input or end after it
            // (its lanes there are masked) is gathered instead.
            Value inBounds = arith::AndIOp::create(
                b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset, index(0)),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, offset,
                                      index(total - width)));
            auto branch = scf::IfOp::create(b, loc, TypeRange{type}, inBounds, true);
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(branch.thenBlock());
              scf::YieldOp::create(
                  b, loc,
                  vector::MaskedLoadOp::create(b, loc, type, flat, ValueRange{offset}, mask, zeros)
                      .getResult());
              b.setInsertionPointToStart(branch.elseBlock());
              Value offsets = arith::AddIOp::create(
                  b, loc,
                  vector::BroadcastOp::create(
                      b, loc, lanesType,
                      arith::IndexCastOp::create(b, loc, b.getI32Type(), offset)),
                  steps);
              scf::YieldOp::create(b, loc,
                                   vector::GatherOp::create(b, loc, type, flat,
                                                            ValueRange{index(0)}, offsets, mask,
                                                            zeros)
                                       .getResult());
            }
            vector::StoreOp::create(b, loc, branch.getResult(0), panel,
                                    ValueRange{k, index(v * width)});
          }
        }
    });
    return true;
  }

  /// Whether the producer is elementwise on inputs along its innermost
  /// dimension or not at all (a squeeze-excitation's scale, a
  /// normalization and activation before the product), that dimension a
  /// column dimension at least half a vector long: it computes runs of
  /// columns on lanes (LaneEmitter.h). Sets `producerVaries`.
  bool producerRunsAlongRows() {
    linalg::GenericOp producer = fusion.producer;
    auto shape = cast<MemRefType>(producer.getDpsInits()[0].getType()).getShape();
    int64_t innermost = producer.getNumLoops() - 1;
    ArrayRef<int64_t> columnDims = fusion.groups.back();
    if (producer.getNumDpsInputs() == 0 || columnDims.empty() || columnDims.back() != innermost ||
        2 * shape[innermost] < width || !hasLaneOperands(producer) ||
        !producer.getRegion().front().getOps<memref::LoadOp>().empty())
      return false;
    producerVaries = std::make_unique<LaneDependence>(producer);
    return hasLaneBody(producer, *producerVaries);
  }

  /// Whether the producer can compute a vector of columns at a time: a
  /// gather with no inputs whose body is arith on indices and values and
  /// loads from f32 buffers of static shape and identity layout.
  bool producerRunsOnLanes() {
    linalg::GenericOp producer = fusion.producer;
    auto shape = cast<MemRefType>(producer.getDpsInits()[0].getType());
    if (producer.getNumDpsInputs() != 0 || shape.getNumElements() >= (int64_t(1) << 31))
      return false;
    for (Operation &inner : producer.getRegion().front().without_terminator()) {
      if (isa<linalg::IndexOp>(inner))
        continue;
      if (auto load = dyn_cast<memref::LoadOp>(inner)) {
        MemRefType type = load.getMemRefType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
            !type.getElementType().isF32() || type.getNumElements() >= (int64_t(1) << 31))
          return false;
        continue;
      }
      // Indices run as 32-bit lanes: no casts that would see their width.
      if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(inner))
        return false;
      if (!isa<arith::ArithDialect>(inner.getDialect()) || !isMemoryEffectFree(&inner) ||
          inner.getNumRegions() != 0)
        return false;
    }
    return true;
  }

  /// The producer's body on the lanes whose loop indices `at` holds (a
  /// vector of indices for a dimension that differs by lane): operations on
  /// a vector operand run on vectors, loads at vector indices gather from
  /// the buffer seen as one dimension, for the lanes of `mask`.
  Value producerLanes(ArrayRef<Value> at, Value mask) {
    Block &body = fusion.producer.getRegion().front();
    auto isVector = [](Value value) { return isa<VectorType>(value.getType()); };
    // Indices lane by lane are 32-bit.
    auto laneType = [&](Type type) {
      return vectorType(type.isIndex() ? Type(b.getI32Type()) : type);
    };
    auto widen = [&](Value value) -> Value {
      if (isVector(value))
        return value;
      if (value.getType().isIndex())
        value = arith::IndexCastOp::create(b, loc, b.getI32Type(), value);
      return vector::BroadcastOp::create(b, loc, vectorType(value.getType()), value);
    };
    IRMapping mapping;
    for (Operation &inner : body.without_terminator()) {
      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(indexOp.getResult(), at[indexOp.getDim()]);
        continue;
      }
      SmallVector<Value> operands;
      for (Value operand : inner.getOperands())
        operands.push_back(mapping.lookupOrDefault(operand));
      if (llvm::none_of(operands, isVector)) {
        b.clone(inner, mapping);
        continue;
      }
      if (auto loadOp = dyn_cast<memref::LoadOp>(inner)) {
        SmallVector<Value> lanes = llvm::map_to_vector(ArrayRef(operands).drop_front(), widen);
        mapping.map(loadOp.getResult(), gatherLanes(b, loc, vectorType(b.getF32Type()),
                                                    loadOp.getMemRef(), lanes, mask));
        continue;
      }
      for (Value &operand : operands)
        operand = widen(operand);
      Operation *copy = b.clone(inner, mapping);
      copy->setOperands(operands);
      for (OpResult result : copy->getResults())
        result.setType(laneType(result.getType()));
    }
    return widen(mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
  }

  /// The producer's body at its loop indices `at`.
  Value producerValue(ArrayRef<Value> at) {
    linalg::GenericOp producer = fusion.producer;
    Block &body = producer.getRegion().front();
    SmallVector<AffineMap> producerMaps = producer.getIndexingMapsArray();
    IRMapping mapping;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      AffineMap map = producerMaps[input->getOperandNumber()];
      SmallVector<Value> operandIndices;
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        operandIndices.push_back(
            affine::AffineApplyOp::create(b, loc, map.getSubMap({r}), at).getResult());
      mapping.map(body.getArgument(input->getOperandNumber()),
                  memref::LoadOp::create(b, loc, input->get(), operandIndices).getResult());
    }
    for (Operation &inner : body.without_terminator()) {
      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(indexOp.getResult(), at[indexOp.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    return mapping.lookup(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
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
          SmallVector<Value> next;
          for (int64_t r = 0; r < tileRows; ++r) {
            dims[roles.m] = rowIndices[r];
            Value scalar = memref::LoadOp::create(b, loc, a, indices(aMap, dims));
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

  linalg::GenericOp op;
  const Roles &roles;
  Fusion fusion;
  int64_t width, rows;
  OpBuilder b;
  Location loc;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> ranges;
  /// The value of each loop dimension where code is being emitted.
  SmallVector<Value> dims;
  /// The task's panel of B, when the producer of B is fused or B copied.
  Value panel;
  /// Which values of the producer's body differ by lane, when it computes
  /// runs of columns on lanes.
  std::unique_ptr<LaneDependence> producerVaries;
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
