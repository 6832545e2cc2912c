// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- LaneEmitter.cpp - a generic's body on vector lanes -----------------===//

#include "codegen/host/LaneEmitter.h"
#include "dialects/kiln/KilnDialect.h"

#include "codegen/common/Buffers.h"
#include "codegen/host/VectorBody.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::host {

namespace {

/// A value of the body across the lanes.
struct Lanes {
  enum Kind { Uniform, Affine, Varying };
  Kind kind = Uniform;
  /// Uniform: the scalar; Affine: lane 0's index; Varying: the vector (of
  /// i32 for indices).
  Value value;
  /// Affine: lane i's index is `value + stride * i`.
  int64_t stride = 0;
};

/// Whether `type` is one a body value may have here.
bool isLaneType(Type type) {
  return type.isF32() || type.isIndex() || type.isInteger(1) || type.isInteger(32);
}

} // namespace

LaneDependence::LaneDependence(linalg::GenericOp op) : op(op) {}

bool LaneDependence::operator()(Value value) {
  auto [it, inserted] = known.try_emplace(value, false);
  if (!inserted)
    return it->second;
  bool varies = compute(value);
  known[value] = varies;
  return varies;
}

bool LaneDependence::compute(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    Block *owner = argument.getOwner();
    if (owner == &op.getRegion().front()) {
      OpOperand &operand = op->getOpOperand(argument.getArgNumber());
      return op.getMatchingIndexingMap(&operand).isFunctionOfDim(op.getNumLoops() - 1);
    }
    // A loop's induction variable is uniform (hasLaneBody checks its bounds
    // are); what it carries may differ.
    auto loop = dyn_cast<scf::ForOp>(owner->getParentOp());
    return loop && argument != loop.getInductionVar();
  }
  Operation *def = value.getDefiningOp();
  if (!op->isProperAncestor(def))
    return false;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return index.getDim() == op.getNumLoops() - 1;
  if (isa<scf::ForOp>(def))
    return true;
  return llvm::any_of(def->getOperands(), [&](Value operand) { return (*this)(operand); });
}

bool hasLaneBody(linalg::GenericOp op, LaneDependence &varies) {
  Block &body = op.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return false;
  WalkResult result = body.walk([&](Operation *inner) {
    if (isa<linalg::IndexOp, linalg::YieldOp, scf::YieldOp>(inner))
      return WalkResult::advance();
    if (auto loop = dyn_cast<scf::ForOp>(inner)) {
      bool uniform =
          !varies(loop.getLowerBound()) && !varies(loop.getUpperBound()) && !varies(loop.getStep());
      bool typed = llvm::all_of(loop.getResultTypes(), isLaneType);
      return uniform && typed ? WalkResult::advance() : WalkResult::interrupt();
    }
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      MemRefType type = load.getMemRefType();
      return type.getLayout().isIdentity() && type.getElementType().isF32()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    bool uniformOnly = isa<affine::AffineDialect>(inner->getDialect()) ||
                       isa<arith::IndexCastOp, arith::IndexCastUIOp>(inner);
    if (uniformOnly && llvm::any_of(inner->getOperands(), std::ref(varies)))
      return WalkResult::interrupt();
    if (!isa<arith::ArithDialect, math::MathDialect, affine::AffineDialect>(inner->getDialect()) ||
        !isMemoryEffectFree(inner) || inner->getNumRegions() != 0 || inner->getNumResults() != 1 ||
        !isLaneType(inner->getResult(0).getType()) ||
        !llvm::all_of(inner->getOperandTypes(), isLaneType))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

namespace {

/// Emits a generic's body for a vector of lanes.
class LaneEmitter {
public:
  LaneEmitter(linalg::GenericOp op, int64_t width, OpBuilder &b, LaneDependence &varies)
      : op(op), width(width), b(b), loc(op.getLoc()), varies(varies) {}

  /// What the body yields for the `active` lanes from `at` (as
  /// emitOnLanes).
  Value compute(ArrayRef<Value> at, Value mask, Value active) {
    this->at.assign(at.begin(), at.end());
    this->mask = mask;
    this->active = active;
    scopes.clear();
    scopes.emplace_back();
    Block &body = op.getRegion().front();
    unsigned innermost = op.getNumLoops() - 1;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      SmallVector<Value> where = indicesAt(b, loc, map, at);
      Lanes lanes;
      if (map.isFunctionOfDim(innermost))
        lanes = {Lanes::Varying,
                 loadLanes(b, loc, vectorOf(b.getF32Type()), input->get(), where, mask)};
      else
        lanes = {Lanes::Uniform, memref::LoadOp::create(b, loc, input->get(), where)};
      scopes.back()[body.getArgument(input->getOperandNumber())] = lanes;
    }
    return vector(body.getTerminator()->getOperand(0));
  }

  /// Whether a read gathered where no bounds check versions it.
  bool gathersInside() const { return gathered; }

private:
  VectorType vectorOf(Type type) {
    return VectorType::get({width}, type.isIndex() ? Type(b.getI32Type()) : type);
  }
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  /// The lanes of `value`, emitting what computes it on first use.
  Lanes get(Value value) {
    // Under assumptions a value that differs by lane may take another form
    // (a bounds check is true, an index clamped by it affine): only what
    // was computed under them is reused.
    size_t first = assuming && isa<OpResult>(value) && varies(value) ? assumedFrom : 0;
    for (size_t i = scopes.size(); i-- > first;)
      if (auto it = scopes[i].find(value); it != scopes[i].end())
        return it->second;
    Operation *def = value.getDefiningOp();
    if (!def || !op->isProperAncestor(def))
      return {Lanes::Uniform, value};
    emitOp(def);
    return scopes.back().lookup(value);
  }

  /// `value` as a vector.
  Value vector(Value value) { return materialize(get(value), value.getType()); }

  Value materialize(const Lanes &lanes, Type type) {
    if (lanes.kind == Lanes::Varying)
      return lanes.value;
    Value scalar = lanes.value;
    if (type.isIndex())
      scalar = arith::IndexCastOp::create(b, loc, b.getI32Type(), scalar);
    Value splat = vector::BroadcastOp::create(b, loc, vectorOf(type), scalar);
    if (lanes.kind == Lanes::Uniform)
      return splat;
    SmallVector<int32_t> steps;
    for (int64_t lane = 0; lane < width; ++lane)
      steps.push_back(int32_t(lane * lanes.stride));
    Value offsets = arith::ConstantOp::create(b, loc, vectorOf(type), b.getI32VectorAttr(steps));
    return arith::AddIOp::create(b, loc, splat, offsets);
  }

  /// The scalar of uniform or affine `lanes` at lane `lane` (an index;
  /// null: the first).
  Value laneScalar(const Lanes &lanes, Value lane) {
    if (lanes.kind == Lanes::Uniform || !lane)
      return lanes.value;
    Value offset = arith::MulIOp::create(b, loc, lane, index(lanes.stride));
    return arith::AddIOp::create(b, loc, lanes.value, offset);
  }

  void define(Value value, Lanes lanes) { scopes.back()[value] = lanes; }

  static std::optional<bool> constantBool(const Lanes &lanes) {
    APInt value;
    if (lanes.kind == Lanes::Uniform && lanes.value.getType().isInteger(1) &&
        matchPattern(lanes.value, m_ConstantInt(&value)))
      return !value.isZero();
    return std::nullopt;
  }

  void emitOp(Operation *inner) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
      unsigned dim = indexOp.getDim();
      if (dim == at.size() - 1)
        define(indexOp, {Lanes::Affine, at[dim], 1});
      else
        define(indexOp, {Lanes::Uniform, at[dim]});
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(inner))
      return emitLoop(loop);
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      return emitLoad(load);
    if (auto select = dyn_cast<arith::SelectOp>(inner))
      return emitSelect(select);
    SmallVector<Lanes> operands;
    for (Value operand : inner->getOperands())
      operands.push_back(get(operand));
    Value result = inner->getResult(0);
    if (auto compare = dyn_cast<arith::CmpIOp>(inner); compare && assuming) {
      auto affine = [](const Lanes &l) { return l.kind == Lanes::Affine; };
      auto varying = [](const Lanes &l) { return l.kind == Lanes::Varying; };
      if (llvm::any_of(operands, affine) && llvm::none_of(operands, varying)) {
        assumed.push_back(compare);
        define(result, {Lanes::Uniform, arith::ConstantIntOp::create(b, loc, 1, 1)});
        return;
      }
    }
    if (isa<arith::AndIOp, arith::OrIOp>(inner)) {
      bool isAnd = isa<arith::AndIOp>(inner);
      for (unsigned i = 0; i < 2; ++i)
        if (std::optional<bool> known = constantBool(operands[i])) {
          // true && x, false || x: x; false && x, true || x: the constant.
          define(result, *known == isAnd ? operands[1 - i] : operands[i]);
          return;
        }
    }
    if (std::optional<Lanes> affine = affineOf(inner, operands)) {
      define(result, *affine);
      return;
    }
    auto uniform = [](const Lanes &l) { return l.kind == Lanes::Uniform; };
    if (llvm::all_of(operands, uniform)) {
      IRMapping mapping;
      for (auto [operand, lanes] : llvm::zip(inner->getOperands(), operands))
        mapping.map(operand, lanes.value);
      define(result, {Lanes::Uniform, b.clone(*inner, mapping)->getResult(0)});
      return;
    }
    IRMapping mapping;
    for (auto [operand, lanes] : llvm::zip(inner->getOperands(), operands))
      mapping.map(operand, materialize(lanes, operand.getType()));
    Operation *copy = b.clone(*inner, mapping);
    copy->getResult(0).setType(vectorOf(result.getType()));
    define(result, {Lanes::Varying, copy->getResult(0)});
  }

  /// Index arithmetic that keeps lanes affine: a sum or difference of
  /// affine and uniform indices, an affine index times a constant.
  std::optional<Lanes> affineOf(Operation *inner, ArrayRef<Lanes> operands) {
    if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(inner) ||
        !inner->getResult(0).getType().isIndex())
      return std::nullopt;
    const Lanes &lhs = operands[0], &rhs = operands[1];
    if (lhs.kind == Lanes::Varying || rhs.kind == Lanes::Varying ||
        (lhs.kind == Lanes::Uniform && rhs.kind == Lanes::Uniform))
      return std::nullopt;
    auto withStride = [&](Value base, int64_t stride) -> Lanes {
      if (stride == 0)
        return {Lanes::Uniform, base};
      return {Lanes::Affine, base, stride};
    };
    if (isa<arith::MulIOp>(inner)) {
      // One side affine, the other a constant.
      const Lanes &affine = lhs.kind == Lanes::Affine ? lhs : rhs;
      Value factor = lhs.kind == Lanes::Affine ? inner->getOperand(1) : inner->getOperand(0);
      APInt constant;
      if (!matchPattern(factor, m_ConstantInt(&constant)) ||
          (lhs.kind == Lanes::Affine && rhs.kind == Lanes::Affine))
        return std::nullopt;
      int64_t c = constant.getSExtValue();
      Value base = arith::MulIOp::create(b, loc, affine.value, index(c));
      return withStride(base, affine.stride * c);
    }
    int64_t sign = isa<arith::SubIOp>(inner) ? -1 : 1;
    Value base = isa<arith::SubIOp>(inner)
                     ? arith::SubIOp::create(b, loc, lhs.value, rhs.value).getResult()
                     : arith::AddIOp::create(b, loc, lhs.value, rhs.value).getResult();
    return withStride(base, lhs.stride + sign * rhs.stride);
  }

  /// Whether `loop` goes on summing what an enclosing loop carries (a
  /// window's row of taps, each added to the sum of the rows before), over
  /// 4 steps or more: it carries one f32 value, the init an enclosing
  /// loop's, and each step adds to it and uses it for nothing else.
  static bool continuesSum(scf::ForOp loop) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips || trips->getZExtValue() < 4 || loop.getNumRegionIterArgs() != 1 ||
        !loop.getInitArgs()[0].getType().isF32())
      return false;
    auto outer = dyn_cast<BlockArgument>(loop.getInitArgs()[0]);
    if (!outer || !isa<scf::ForOp>(outer.getOwner()->getParentOp()))
      return false;
    Value carried = loop.getRegionIterArgs()[0];
    auto add = loop.getBody()->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
    return add && carried.hasOneUse() && (add.getLhs() == carried || add.getRhs() == carried);
  }

  void emitLoop(scf::ForOp loop) {
    Value lower = get(loop.getLowerBound()).value, upper = get(loop.getUpperBound()).value,
          step = get(loop.getStep()).value;
    SmallVector<Value> inits;
    for (Value init : loop.getInitArgs())
      inits.push_back(vector(init));
    // A row of a window's taps sums from zero, and its sum then joins the
    // rows before it: each row is a chain of additions of its own, which
    // the core runs side by side, rather than one chain through the whole
    // window (25 dependent additions for 5x5; a 3x3 window's 9 gain
    // nothing). The sum's order changes as a vectorized reduction's does.
    Value before;
    if (continuesSum(loop)) {
      before = inits[0];
      inits[0] = splat(b, loc, cast<VectorType>(before.getType()), b.getF32FloatAttr(0));
    }
    auto copy = scf::ForOp::create(b, loc, lower, upper, step, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *body = copy.getBody();
      bool terminated = !body->empty() && body->back().hasTrait<OpTrait::IsTerminator>();
      if (terminated)
        b.setInsertionPoint(body->getTerminator());
      else
        b.setInsertionPointToEnd(body);
      scopes.emplace_back();
      define(loop.getInductionVar(), {Lanes::Uniform, copy.getInductionVar()});
      for (auto [old, now] : llvm::zip(loop.getRegionIterArgs(), copy.getRegionIterArgs()))
        define(old, {Lanes::Varying, now});
      SmallVector<Value> yielded;
      for (Value value : loop.getBody()->getTerminator()->getOperands())
        yielded.push_back(vector(value));
      if (!terminated)
        scf::YieldOp::create(b, loc, yielded);
      scopes.pop_back();
    }
    if (before) {
      define(loop.getResult(0),
             {Lanes::Varying, arith::AddFOp::create(b, loc, before, copy.getResult(0))});
      return;
    }
    for (auto [old, now] : llvm::zip(loop.getResults(), copy.getResults()))
      define(old, {Lanes::Varying, now});
  }

  void emitLoad(memref::LoadOp load) {
    Value memref = load.getMemRef();
    SmallVector<Lanes> indices;
    for (Value indexValue : load.getIndices())
      indices.push_back(get(indexValue));
    auto uniform = [](const Lanes &l) { return l.kind == Lanes::Uniform; };
    if (llvm::all_of(indices, uniform)) {
      SmallVector<Value> where;
      for (const Lanes &l : indices)
        where.push_back(l.value);
      define(load, {Lanes::Uniform, memref::LoadOp::create(b, loc, memref, where)});
      return;
    }
    VectorType type = vectorOf(b.getF32Type());
    const Lanes &last = indices.back();
    if (llvm::all_of(ArrayRef(indices).drop_back(), uniform) && last.kind == Lanes::Affine &&
        last.stride == 1) {
      SmallVector<Value> where;
      for (const Lanes &l : indices)
        where.push_back(l.value);
      if (last.stride == 1) {
        define(load, {Lanes::Varying,
                      loadLanes(b, loc, type, memref, where, loadMask ? loadMask : mask)});
        return;
      }
    }
    if (llvm::all_of(ArrayRef(indices).drop_back(), uniform) && last.kind == Lanes::Affine &&
        last.stride == 2 && !loadMask) {
      SmallVector<Value> where;
      for (const Lanes &l : indices)
        where.push_back(l.value);
      // Stride 2: the even elements of the 2 * width from the first lane's,
      // reading only up to the last active lane's.
      Value span =
          arith::SubIOp::create(b, loc, arith::MulIOp::create(b, loc, active, index(2)), index(1));
      Value low = loadLanes(b, loc, type, memref, where,
                            laneMask(arith::MinSIOp::create(b, loc, span, index(width))));
      where.back() = arith::AddIOp::create(b, loc, where.back(), index(width));
      Value high = loadLanes(b, loc, type, memref, where,
                             laneMask(arith::SubIOp::create(b, loc, span, index(width))));
      SmallVector<int64_t> evens;
      for (int64_t lane = 0; lane < width; ++lane)
        evens.push_back(2 * lane);
      define(load, {Lanes::Varying, vector::ShuffleOp::create(b, loc, low, high, evens)});
      return;
    }
    // Anything else gathers, from the buffer seen as one dimension
    // (gatherLanes), or from one image of it where a run gives only the
    // batch and every lane reads the same image: offsets into a static
    // image stay 32-bit.
    if (!onEdge)
      gathered = true;
    SmallVector<Value> lanes;
    for (const Lanes &l : indices)
      lanes.push_back(materialize(l, b.getIndexType()));
    auto memrefType = cast<MemRefType>(memref.getType());
    ArrayRef<int64_t> shape = memrefType.getShape();
    if (!memrefType.hasStaticShape() && llvm::none_of(shape.drop_front(), ShapedType::isDynamic) &&
        indices.front().kind == Lanes::Uniform &&
        ShapedType::getNumElements(shape.drop_front()) < (int64_t(1) << 31)) {
      int64_t rank = memrefType.getRank();
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
          strides(rank, b.getIndexAttr(1));
      offsets[0] = indices.front().value;
      sizes.push_back(b.getIndexAttr(1));
      for (int64_t size : shape.drop_front())
        sizes.push_back(b.getIndexAttr(size));
      auto image = MemRefType::get(shape.drop_front(), memrefType.getElementType());
      auto imageType = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
          image.getShape(), memrefType, offsets, sizes, strides));
      memref = memref::SubViewOp::create(b, loc, imageType, memref, offsets, sizes, strides);
      lanes.erase(lanes.begin());
    }
    define(load, {Lanes::Varying, gatherLanes(b, loc, type, memref, lanes,
                                              loadMask ? loadMask : laneMask(active))});
  }

  /// The mask of the first `lanes` lanes (an index; none when negative).
  Value laneMask(Value lanes) {
    return vector::CreateMaskOp::create(b, loc, vectorOf(b.getI1Type()), ValueRange{lanes});
  }

  void emitSelect(arith::SelectOp select) {
    // A value chosen by a bounds check that differs by lane: versioned.
    if (!assuming && !onEdge && select.getType().isF32() && isVersionable(select))
      return emitVersioned(select);
    Lanes condition = get(select.getCondition());
    if (std::optional<bool> known = constantBool(condition)) {
      define(select, get(*known ? select.getTrueValue() : select.getFalseValue()));
      return;
    }
    Lanes whenTrue = get(select.getTrueValue()), whenFalse = get(select.getFalseValue());
    Type type = select.getType();
    if (condition.kind == Lanes::Uniform) {
      if (whenTrue.kind == Lanes::Uniform && whenFalse.kind == Lanes::Uniform) {
        define(select, {Lanes::Uniform, arith::SelectOp::create(b, loc, condition.value,
                                                                whenTrue.value, whenFalse.value)});
        return;
      }
      if (whenTrue.kind == Lanes::Affine && whenFalse.kind == Lanes::Affine &&
          whenTrue.stride == whenFalse.stride) {
        define(select,
               {Lanes::Affine,
                arith::SelectOp::create(b, loc, condition.value, whenTrue.value, whenFalse.value),
                whenTrue.stride});
        return;
      }
    }
    Value chosen = arith::SelectOp::create(
        b, loc,
        condition.kind == Lanes::Uniform ? condition.value
                                         : materialize(condition, select.getCondition().getType()),
        materialize(whenTrue, type), materialize(whenFalse, type));
    define(select, {Lanes::Varying, chosen});
  }

  /// What `value` is computed from in the body: the integer compares that
  /// differ by lane, and whether a loop is among them.
  struct Slice {
    SetVector<Operation *> compares;
    bool loops = false;
  };
  void sliceOf(Value value, Slice &slice, DenseSet<Operation *> &seen) {
    Operation *def = value.getDefiningOp();
    if (!def || !op->isProperAncestor(def) || !seen.insert(def).second)
      return;
    if (isa<scf::ForOp>(def)) {
      slice.loops = true;
      return;
    }
    if (isa<arith::CmpIOp>(def) && varies(value))
      slice.compares.insert(def);
    for (Value operand : def->getOperands())
      sliceOf(operand, slice, seen);
  }
  Slice sliceOf(ValueRange values) {
    Slice slice;
    DenseSet<Operation *> seen;
    for (Value value : values)
      sliceOf(value, slice, seen);
    return slice;
  }

  /// Whether a select depends on compares that differ by lane, with no
  /// loop in between (the compares are checked before it).
  bool isVersionable(arith::SelectOp select) {
    Slice slice = sliceOf(select->getOperands());
    return !slice.compares.empty() && !slice.loops;
  }

  /// Whether the select's true value, at the lanes where its condition
  /// holds, is what it is with every compare it depends on true: those
  /// compares are all conjuncts of the condition.
  bool isMaskable(arith::SelectOp select) {
    SmallVector<Value> conjuncts = {select.getCondition()};
    DenseSet<Operation *> leaves;
    while (!conjuncts.empty()) {
      Value value = conjuncts.pop_back_val();
      Operation *def = value.getDefiningOp();
      if (isa_and_nonnull<arith::AndIOp>(def))
        llvm::append_range(conjuncts, def->getOperands());
      else if (def)
        leaves.insert(def);
    }
    Slice slice = sliceOf(select.getTrueValue());
    return llvm::all_of(slice.compares, [&](Operation *c) { return leaves.contains(c); });
  }

  /// scf.if (every integer compare the select depends on holds in the
  /// first and the last active lane) { the select with those compares
  /// true } else { the select lane by lane }. At the edge, a maskable
  /// select reads its true value with those compares true too, its loads
  /// masked by the condition: a masked vector load rather than a gather.
  void emitVersioned(arith::SelectOp select) {
    auto versioned = scf::IfOp::create(b, loc, TypeRange{vectorOf(select.getType())},
                                       arith::ConstantIntOp::create(b, loc, 1, 1),
                                       /*withElseRegion=*/true);
    auto branch = [&](Block *block, function_ref<Value()> compute) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(block);
      scopes.emplace_back();
      scf::YieldOp::create(b, loc, compute());
      scopes.pop_back();
    };
    auto assume = [&](Value lanes, function_ref<Value()> compute) {
      assuming = true;
      assumedFrom = scopes.size();
      loadMask = lanes;
      scopes.emplace_back();
      Value value = compute();
      scopes.pop_back();
      assuming = false;
      loadMask = Value();
      return value;
    };
    assumed.clear();
    branch(versioned.thenBlock(), [&] { return assume(Value(), [&] { return vector(select); }); });
    SmallVector<arith::CmpIOp> conditions = std::move(assumed);
    ++onEdge;
    branch(versioned.elseBlock(), [&] {
      if (!isMaskable(select))
        return vector(select);
      Value condition = materialize(get(select.getCondition()), b.getI1Type());
      Value whenFalse = vector(select.getFalseValue());
      Value lanes = mask ? arith::AndIOp::create(b, loc, condition, mask) : condition;
      Value whenTrue = assume(lanes, [&] { return vector(select.getTrueValue()); });
      return arith::SelectOp::create(b, loc, condition, whenTrue, whenFalse).getResult();
    });
    --onEdge;
    // The compares' operands, evaluated before the branch: when one is no
    // longer affine without the assumptions, the edge path always runs.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(versioned);
    Value holds = arith::ConstantIntOp::create(b, loc, 1, 1);
    for (arith::CmpIOp compare : conditions) {
      Lanes lhs = get(compare.getLhs()), rhs = get(compare.getRhs());
      if (lhs.kind == Lanes::Varying || rhs.kind == Lanes::Varying) {
        holds = arith::ConstantIntOp::create(b, loc, 1, 0);
        break;
      }
      Value last = arith::SubIOp::create(b, loc, active, index(1));
      for (Value lane : {Value(), last}) {
        Value check = arith::CmpIOp::create(b, loc, compare.getPredicate(), laneScalar(lhs, lane),
                                            laneScalar(rhs, lane));
        holds = arith::AndIOp::create(b, loc, holds, check);
      }
    }
    versioned->setOperand(0, holds);
    define(select, {Lanes::Varying, versioned.getResult(0)});
  }

  linalg::GenericOp op;
  int64_t width;
  OpBuilder &b;
  Location loc;
  LaneDependence &varies;
  SmallVector<Value> at;
  Value mask;
  /// How many lanes, from the first, are computed (an index).
  Value active;
  /// What each value is across the lanes, innermost region last.
  SmallVector<DenseMap<Value, Lanes>> scopes;
  /// Emitting code where the integer compares on affine indices hold in
  /// every lane (of `loadMask`, when set: loads read only those), from
  /// scope `assumedFrom` on; the compares met so far.
  bool assuming = false;
  size_t assumedFrom = 0;
  Value loadMask;
  SmallVector<arith::CmpIOp> assumed;
  /// Emitting the path for the lanes at an edge (nested depth).
  int onEdge = 0;
  bool gathered = false;
};

} // namespace

Value emitOnLanes(linalg::GenericOp op, int64_t width, OpBuilder &b, LaneDependence &varies,
                  ArrayRef<Value> at, Value mask, Value active, bool *gathers) {
  LaneEmitter emitter(op, width, b, varies);
  Value result = emitter.compute(at, mask, active);
  if (gathers)
    *gathers = emitter.gathersInside();
  return result;
}

bool readsAlongLanes(linalg::GenericOp op, int64_t width, LaneDependence &varies) {
  // In a block of its own, erased after.
  Block scratch;
  OpBuilder b(op.getContext());
  b.setInsertionPointToEnd(&scratch);
  SmallVector<Value> at;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    at.push_back(arith::ConstantIndexOp::create(b, op.getLoc(), 0));
  Value active = arith::ConstantIndexOp::create(b, op.getLoc(), width);
  bool gathers = false;
  emitOnLanes(op, width, b, varies, at, Value(), active, &gathers);
  scratch.clear();
  return !gathers;
}

} // namespace kiln::host
