// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Panels.cpp - a task's panel of B for register tiles ----------------===//
//
// Each task of a register-tiled product reads its columns of B from a
// panel on its stack when B is an activation read by more than one tile
// of rows (copied) or computed by the kernel before the product (its
// producer's body run per task: runs along an image's rows on lanes, a
// vector of columns gathered at a time, the im2col of a "same" convolution
// as shifted rows and of a stride-2 one as every other element of the
// input's rows, or element by element).
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Panels.h"
#include "dialects/kiln/KilnDialect.h"

#include "codegen/host/LaneEmitter.h"

#include "codegen/common/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::host {

namespace {

class PanelBuilder : TileContext {
public:
  PanelBuilder(const TileContext &tile, Value panel) : TileContext(tile), panel(panel) {}

  /// Copies the task's columns [column, column + tileColumns) of every row
  /// k of B into its panel.
  void copy(Value column, int64_t tileColumns) {
    Value bMatrix = op.getDpsInputs()[1];
    loop(ranges[roles.k], [&](Value k) {
      dims[roles.k] = k;
      for (int64_t v = 0; v * width < tileColumns; ++v) {
        int64_t lanes = std::min(width, tileColumns - v * width);
        Value mask = lanes == width ? Value() : laneMask(lanes);
        dims[roles.n] = plus(column, v * width);
        store(load(bMatrix, indices(maps[1], dims), mask), panel, {k, index(v * width)}, mask);
      }
    });
  }

  /// Computes the task's panel of B, columns [column, column + tileColumns)
  /// of every row k, with the producer's body at each element.
  void pack(Value column, int64_t tileColumns, Value left) {
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
    if (std::optional<Window> window = windowOf(at)) {
      if (window->stride == 1)
        shiftedRows(*window, column, tileColumns, left);
      else
        evenRows(*window, column, tileColumns);
      return;
    }
    assert(!left && "a run's columns are fused only for a window read as rows");
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
        Value mask = laneMask(lanes);
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

  /// An im2col window (im2colWindow) for one task: its image [C, H, W]
  /// seen as one dimension, and the sizes a run may give.
  struct Window : Im2colWindow {
    Value flat;
    OpFoldResult height, inputWidth, outputWidth, total;
    /// The image's first channel of the task's group.
    Value channel0;
  };

  /// The producer's window, when it is one whose panel's rows are read as
  /// vectors.
  std::optional<Window> windowOf(ArrayRef<Value> at) {
    linalg::GenericOp producer = fusion.producer;
    std::optional<Im2colWindow> shape = im2colWindow(producer, fusion.groups, width);
    if (!shape)
      return std::nullopt;
    Window window;
    static_cast<Im2colWindow &>(window) = *shape;
    Value input = window.input;
    SmallVector<OpFoldResult> sizes = memref::getMixedSizes(b, loc, input);
    window.height = sizes[2];
    window.inputWidth = sizes[3];
    window.outputWidth = memref::getMixedSize(b, loc, producer.getDpsInits()[0], 6);
    window.total = times(times(sizes[1], sizes[2]), sizes[3]);
    // The input as one dimension (its layout the identity), then the
    // task's image in it: a run of unit stride.
    SmallVector<ReassociationIndices> all = {{0, 1, 2, 3}};
    Value flat = memref::CollapseShapeOp::create(b, loc, input, all);
    OpFoldResult first = times(at[0], window.total);
    window.flat = memref::SubViewOp::create(b, loc, flat, ArrayRef<OpFoldResult>{first},
                                            ArrayRef<OpFoldResult>{window.total},
                                            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    window.channel0 = arith::MulIOp::create(b, loc, at[1], index(window.channels));
    return window;
  }

  /// a * b, folded where both are static.
  OpFoldResult times(OpFoldResult a, OpFoldResult c) {
    std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(c);
    if (x && y)
      return b.getIndexAttr(*x * *y);
    return arith::MulIOp::create(b, loc, value(a), value(c)).getResult();
  }

  Value lanesOf(int64_t value) {
    return splat(b, loc, vectorType(b.getI32Type()), b.getI32IntegerAttr(int32_t(value)));
  }

  /// A size a run may give, on every lane as i32 (an image's height or
  /// width, which fits).
  Value lanesOf(OpFoldResult size) {
    if (std::optional<int64_t> known = getConstantIntValue(size))
      return lanesOf(*known);
    return vector::BroadcastOp::create(
        b, loc, vectorType(b.getI32Type()),
        arith::IndexCastOp::create(b, loc, b.getI32Type(), value(size)));
  }

  /// The lanes of `value` (a vector of i32) in [0, end).
  Value within(Value value, OpFoldResult end) {
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, value, lanesOf(0));
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, value, lanesOf(end));
    return arith::AndIOp::create(b, loc, low, high);
  }

  /// The lanes 0, 1, ... of a vector of i32.
  Value laneSteps() {
    return arith::ConstantOp::create(
        b, loc, vectorType(b.getI32Type()),
        b.getI32VectorAttr(llvm::to_vector(llvm::seq<int32_t>(0, int32_t(width)))));
  }

  /// A vector of the image seen as one dimension: `loads()`, masked loads
  /// of the `span` elements from `offset`, where those lie inside the image
  /// (and `inside`, if given, holds); else `gather()`, which the loads
  /// would have been at the image's first and last elements.
  Value loadOrGather(const Window &window, Value offset, int64_t span, Value inside,
                     llvm::function_ref<Value()> loads, llvm::function_ref<Value()> gather) {
    Value inBounds = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset, index(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, offset,
                              arith::SubIOp::create(b, loc, value(window.total), index(span))));
    if (inside)
      inBounds = arith::AndIOp::create(b, loc, inBounds, inside);
    auto branch = scf::IfOp::create(b, loc, TypeRange{vectorType(b.getF32Type())}, inBounds, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    scf::YieldOp::create(b, loc, loads());
    b.setInsertionPointToStart(branch.elseBlock());
    scf::YieldOp::create(b, loc, gather());
    return branch.getResult(0);
  }

  /// A masked load of the image seen as one dimension at `offset`.
  Value loadInput(const Window &window, Value offset, Value mask) {
    return vector::MaskedLoadOp::create(b, loc, vectorType(b.getF32Type()), window.flat,
                                        ValueRange{offset}, mask, zeros());
  }

  /// Lanes j of the image seen as one dimension at `offset + stride * j`,
  /// for the lanes of `mask`, the offsets from the image's first element:
  /// 32-bit lanes where the image is static and has fewer than 2^31
  /// elements, else 64-bit.
  Value gatherInput(const Window &window, Value offset, int64_t stride, Value mask) {
    std::optional<int64_t> total = getConstantIntValue(window.total);
    bool narrow = total && *total < (int64_t(1) << 31);
    Type laneType = narrow ? b.getI32Type() : b.getI64Type();
    VectorType lanesType = vectorType(laneType);
    SmallVector<Attribute> steps;
    for (int64_t lane = 0; lane < width; ++lane)
      steps.push_back(b.getIntegerAttr(laneType, lane * stride));
    Value offsets = arith::AddIOp::create(
        b, loc,
        vector::BroadcastOp::create(b, loc, lanesType,
                                    arith::IndexCastOp::create(b, loc, laneType, offset)),
        arith::ConstantOp::create(b, loc, lanesType, DenseElementsAttr::get(lanesType, steps)));
    return vector::GatherOp::create(b, loc, vectorType(b.getF32Type()), window.flat,
                                    ValueRange{index(0)}, offsets, mask, zeros());
  }

  /// The panel of an im2col gather whose rows are the input shifted (stride
  /// 1, output rows as long as the input's): row (c, kh, kw) of a vector of
  /// columns is one masked vector load of the input at the columns' first
  /// position moved by (kh - top) * width + kw - left, the mask the lanes
  /// whose window lies inside the input at (kh, kw), computed once a task.
  /// Where a run gives the columns, `left` says how many are left from
  /// `column`; the lanes past them are masked.
  void shiftedRows(const Window &window, Value column, int64_t tileColumns, Value left) {
    Value plane = value(times(window.height, window.inputWidth));
    // Per vector of columns: its first position and the mask of each
    // window offset. A lane's output row and column are counted from the
    // first lane's, in i32 lanes whatever the image's size.
    int64_t vectors = llvm::divideCeil(tileColumns, width);
    SmallVector<Value> firsts;
    SmallVector<SmallVector<Value>> masks(vectors);
    Value steps = laneSteps();
    Value outputWidth = value(window.outputWidth);
    for (int64_t v = 0; v < vectors; ++v) {
      Value first = plus(column, v * width);
      firsts.push_back(first);
      Value columns = arith::AddIOp::create(
          b, loc, lanesOf(arith::RemUIOp::create(b, loc, first, outputWidth).getResult()), steps);
      Value outputRow = arith::AddIOp::create(
          b, loc, lanesOf(arith::DivUIOp::create(b, loc, first, outputWidth).getResult()),
          arith::DivUIOp::create(b, loc, columns, lanesOf(window.outputWidth)));
      Value outputColumn = arith::RemUIOp::create(b, loc, columns, lanesOf(window.outputWidth));
      Value lanes =
          left ? leftMask(left, v * width) : laneMask(std::min(width, tileColumns - v * width));
      for (int64_t kh = 0; kh < window.windowRows; ++kh) {
        Value rowInside = within(arith::AddIOp::create(b, loc, outputRow, lanesOf(kh - window.top)),
                                 window.height);
        rowInside = arith::AndIOp::create(b, loc, rowInside, lanes);
        for (int64_t kw = 0; kw < window.windowColumns; ++kw)
          masks[v].push_back(arith::AndIOp::create(
              b, loc, rowInside,
              within(arith::AddIOp::create(b, loc, outputColumn, lanesOf(kw - window.left)),
                     window.inputWidth)));
      }
    }
    Value inputWidth = value(window.inputWidth);
    loop(window.channels, [&](Value c) {
      Value planeStart =
          arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, window.channel0, c), plane);
      forWindow(window, c, [&](Value k, int64_t kh, int64_t kw) {
        Value shift = plus(arith::MulIOp::create(b, loc, index(kh - window.top), inputWidth),
                           kw - window.left);
        for (int64_t v = 0; v < vectors; ++v) {
          Value offset = arith::AddIOp::create(
              b, loc, arith::AddIOp::create(b, loc, planeStart, firsts[v]), shift);
          // The vector's lanes outside the input are masked: at the
          // input's first and last elements, gathered.
          Value mask = masks[v][kh * window.windowColumns + kw];
          Value row = loadOrGather(
              window, offset, width, Value(), [&] { return loadInput(window, offset, mask); },
              [&] { return gatherInput(window, offset, 1, mask); });
          vector::StoreOp::create(b, loc, row, panel, ValueRange{k, index(v * width)});
        }
      });
    });
  }

  /// The panel of an im2col gather at stride 2: row (c, kh, kw) of the
  /// lanes of a vector of columns in output row oh, from output column ow,
  /// is every other element of the input's row 2 oh + kh - top from column
  /// 2 ow + kw - left, two vector loads and a shuffle of their even lanes.
  /// A vector crosses output rows where they are not a multiple of its
  /// lanes (111 columns after SqueezeNet's first convolution, 28, 14 and 7
  /// in ResNet's downsampling): each output row it holds is a segment of
  /// its lanes, loaded so, and the segments are joined by their masks. The
  /// segments' rows and masks are computed once a task.
  void evenRows(const Window &window, Value column, int64_t tileColumns) {
    // At stride 2 the image is static (im2colWindow).
    int64_t height = *getConstantIntValue(window.height);
    int64_t inputWidth = *getConstantIntValue(window.inputWidth);
    int64_t outputWidth = *getConstantIntValue(window.outputWidth);
    int64_t plane = height * inputWidth;
    int64_t vectors = llvm::divideCeil(tileColumns, width);
    int64_t segments = evenRowSegments(outputWidth, width);
    Value noLanes = laneMask(0);
    Value steps = laneSteps();
    // Lane e of the two loads' masks is lane e / 2 of the columns' where e
    // is even (the elements taken), none where it is odd.
    SmallVector<int64_t> lowLanes, highLanes, evens;
    for (int64_t e = 0; e < width; ++e) {
      lowLanes.push_back(e % 2 == 0 ? e / 2 : width);
      highLanes.push_back(e % 2 == 0 ? (e + width) / 2 : width);
    }
    for (int64_t e = 0; e < 2 * width; e += 2)
      evens.push_back(e);
    // Per segment of a vector (its output row oh + s): whether it has
    // lanes, its lanes, the offset within an input row of its first lane's
    // element were the row to go on before it, 2 (ow - s * outputWidth); of
    // each input row of the window within the plane, whether that row is
    // inside the input; per window column the segment's mask and the two
    // loads'.
    struct Segment {
      Value used, lanes, start;
      SmallVector<Value> rowOffsets, rowsInside, masks, lowMasks, highMasks;
    };
    SmallVector<SmallVector<Segment, 1>, 2> perVector(vectors);
    for (int64_t v = 0; v < vectors; ++v) {
      Value first = plus(column, v * width);
      Value outputRow = arith::DivUIOp::create(b, loc, first, index(outputWidth));
      Value outputColumn = arith::RemUIOp::create(b, loc, first, index(outputWidth));
      int64_t active = std::min(width, tileColumns - v * width);
      Value vectorLanes = laneMask(active);
      for (int64_t s = 0; s < segments; ++s) {
        Segment &segment = perVector[v].emplace_back();
        segment.lanes = vectorLanes;
        if (segments > 1) {
          // Lanes [s * outputWidth - ow, (s + 1) * outputWidth - ow).
          Value from = arith::SubIOp::create(b, loc, index(s * outputWidth), outputColumn);
          segment.used =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, from, index(active));
          Value fromLanes = lanesOf(from);
          Value inside = arith::AndIOp::create(
              b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, steps, fromLanes),
              arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::slt, steps,
                  arith::AddIOp::create(b, loc, fromLanes, lanesOf(outputWidth))));
          segment.lanes = arith::AndIOp::create(b, loc, vectorLanes, inside);
        }
        segment.start = arith::MulIOp::create(
            b, loc, arith::SubIOp::create(b, loc, outputColumn, index(s * outputWidth)), index(2));
        Value inputRow0 = arith::MulIOp::create(b, loc, plus(outputRow, s), index(2));
        for (int64_t kh = 0; kh < window.windowRows; ++kh) {
          Value inputRow = plus(inputRow0, kh - window.top);
          segment.rowOffsets.push_back(arith::MulIOp::create(b, loc, inputRow, index(inputWidth)));
          Value below =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, inputRow, index(height));
          segment.rowsInside.push_back(arith::AndIOp::create(
              b, loc, below,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, inputRow, index(0))));
        }
        Value inputColumns = arith::AddIOp::create(
            b, loc, lanesOf(segment.start), arith::MulIOp::create(b, loc, steps, lanesOf(2)));
        for (int64_t kw = 0; kw < window.windowColumns; ++kw) {
          Value mask = arith::AndIOp::create(
              b, loc, segment.lanes,
              within(arith::AddIOp::create(b, loc, inputColumns, lanesOf(kw - window.left)),
                     b.getIndexAttr(inputWidth)));
          segment.masks.push_back(mask);
          segment.lowMasks.push_back(vector::ShuffleOp::create(b, loc, mask, noLanes, lowLanes));
          segment.highMasks.push_back(vector::ShuffleOp::create(b, loc, mask, noLanes, highLanes));
        }
      }
    }
    loop(window.channels, [&](Value c) {
      Value planeStart = arith::MulIOp::create(
          b, loc, arith::AddIOp::create(b, loc, window.channel0, c), index(plane));
      forWindow(window, c, [&](Value k, int64_t kh, int64_t kw) {
        for (int64_t v = 0; v < vectors; ++v) {
          // A segment's lanes: both loads, where its row is inside the
          // input; else zeros where it is padding, a gather at the input's
          // first and last rows.
          auto segmentLanes = [&](const Segment &segment) {
            Value offset =
                plus(arith::AddIOp::create(
                         b, loc, arith::AddIOp::create(b, loc, planeStart, segment.rowOffsets[kh]),
                         segment.start),
                     kw - window.left);
            auto evenLanes = [&] {
              Value low = loadInput(window, offset, segment.lowMasks[kw]);
              Value high = loadInput(window, plus(offset, width), segment.highMasks[kw]);
              return vector::ShuffleOp::create(b, loc, low, high, evens).getResult();
            };
            auto gathered = [&] {
              Value mask = arith::SelectOp::create(b, loc, segment.rowsInside[kh],
                                                   segment.masks[kw], noLanes);
              return gatherInput(window, offset, 2, mask);
            };
            return loadOrGather(window, offset, 2 * width, segment.rowsInside[kh], evenLanes,
                                gathered);
          };
          Value row = segmentLanes(perVector[v].front());
          for (const Segment &segment : ArrayRef(perVector[v]).drop_front()) {
            auto joined = scf::IfOp::create(b, loc, TypeRange{row.getType()}, segment.used, true);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(joined.thenBlock());
            scf::YieldOp::create(
                b, loc,
                arith::SelectOp::create(b, loc, segment.lanes, segmentLanes(segment), row)
                    .getResult());
            b.setInsertionPointToStart(joined.elseBlock());
            scf::YieldOp::create(b, loc, row);
            row = joined.getResult(0);
          }
          vector::StoreOp::create(b, loc, row, panel, ValueRange{k, index(v * width)});
        }
      });
    });
  }

  /// Calls `body(k, kh, kw)` for each window offset of channel `c`, k its
  /// row of the panel.
  void forWindow(const Window &window, Value c,
                 llvm::function_ref<void(Value, int64_t, int64_t)> body) {
    for (int64_t kh = 0; kh < window.windowRows; ++kh)
      for (int64_t kw = 0; kw < window.windowColumns; ++kw)
        body(arith::AddIOp::create(
                 b, loc,
                 arith::MulIOp::create(b, loc, c, index(window.windowRows * window.windowColumns)),
                 index(kh * window.windowColumns + kw)),
             kh, kw);
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
    if (producer.getNumDpsInputs() != 0 || !shape.hasStaticShape() ||
        shape.getNumElements() >= (int64_t(1) << 31))
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

  /// The task's panel of B.
  Value panel;
  /// Which values of the producer's body differ by lane, when it computes
  /// runs of columns on lanes.
  std::unique_ptr<LaneDependence> producerVaries;
};

} // namespace

void copyPanel(const TileContext &tile, Value panel, Value column, int64_t tileColumns) {
  PanelBuilder(tile, panel).copy(column, tileColumns);
}

void packPanel(const TileContext &tile, Value panel, Value column, int64_t tileColumns,
               Value left) {
  PanelBuilder(tile, panel).pack(column, tileColumns, left);
}

} // namespace kiln::host
