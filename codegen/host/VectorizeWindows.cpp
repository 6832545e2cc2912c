//===- VectorizeWindows.cpp - window kernels on vector lanes --------------===//
//
// A kernel that loops over a window for each output (a depthwise
// convolution, max or average pooling) is an all-parallel generic whose
// body holds scf.for loops over the window and reads its input with
// memref.load at indices it computes, checking them against the input's
// bounds where the window overhangs it:
//
//   %p = ow * stride + kw * dilation - pad
//   %inside = %p >= 0 && %p < W
//   %x = memref.load %input[..., select(%inside, %p, 0)]
//   %v = select(%inside, %x, 0.0)
//
// Here its outputs run a vector of lanes at a time along the innermost
// dimension, the window loops carrying vectors. An index that moves with
// the lane stays a scalar base and a stride (the lanes of %p above are
// `base + stride * lane`), so a read along it is one vector load (at a
// stride of 2: two loads and a shuffle); a value that is the same in every
// lane (a weight, the row's bounds check) stays one scalar. A select on a
// bounds check that differs by lane is versioned: the check is monotonic in
// the lane, so when it holds for the first and the last lane it holds for
// all, and the select is the vector load; at the edges, the lanes compute
// what the scalar code does, gathering their reads.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"
#include "codegen/host/VectorBody.h"
#include "passes/Buffers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {

#define GEN_PASS_DEF_VECTORIZEWINDOWS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

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

/// Which values of `op`'s body differ from lane to lane (lanes run along
/// the innermost loop), each loop's carried values counted as differing.
class LaneDependence {
public:
  explicit LaneDependence(linalg::GenericOp op) : op(op) {}

  bool operator()(Value value) {
    auto [it, inserted] = known.try_emplace(value, false);
    if (!inserted)
      return it->second;
    bool varies = compute(value);
    known[value] = varies;
    return varies;
  }

private:
  bool compute(Value value) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      Block *owner = argument.getOwner();
      if (owner == &op.getRegion().front()) {
        OpOperand &operand = op->getOpOperand(argument.getArgNumber());
        return op.getMatchingIndexingMap(&operand).isFunctionOfDim(op.getNumLoops() - 1);
      }
      // A loop's induction variable is uniform (its bounds are checked to
      // be); what it carries may differ.
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

  linalg::GenericOp op;
  DenseMap<Value, bool> known;
};

/// Whether `op`'s body is made of what WindowEmitter handles: its loop
/// indices, window loops with uniform bounds, loads from static buffers of
/// f32 in identity layout (fewer than 2^31 elements: lane indices are
/// 32-bit), and arith, math and affine.apply on f32, i1, i32 and indices
/// (casts and affine.apply only where uniform).
bool hasWindowBody(linalg::GenericOp op, LaneDependence &varies) {
  Block &body = op.getRegion().front();
  if (!body.getArguments().back().use_empty() || body.getOps<scf::ForOp>().empty())
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
      bool fits = type.hasStaticShape() && type.getLayout().isIdentity() &&
                  type.getElementType().isF32() && type.getNumElements() < (int64_t(1) << 31);
      return fits ? WalkResult::advance() : WalkResult::interrupt();
    }
    bool uniformOnly = isa<affine::AffineApplyOp, arith::IndexCastOp, arith::IndexCastUIOp>(inner);
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

/// Emits a window kernel's body for a vector of lanes.
class WindowEmitter {
public:
  WindowEmitter(linalg::GenericOp op, int64_t width, OpBuilder &b, LaneDependence &varies)
      : op(op), width(width), b(b), loc(op.getLoc()), varies(varies) {}

  /// The body for the lanes from `at` (each loop's index, the innermost's
  /// the first lane's), stored to the output; `mask` (null: all) and
  /// `active` as forEachVector gives them.
  void emit(ArrayRef<Value> at, Value mask, int64_t active) {
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
                 host::loadLanes(b, loc, vectorOf(b.getF32Type()), input->get(), where, mask)};
      else
        lanes = {Lanes::Uniform, memref::LoadOp::create(b, loc, input->get(), where)};
      scopes.back()[body.getArgument(input->getOperandNumber())] = lanes;
    }
    Value result = vector(body.getTerminator()->getOperand(0));
    host::storeLanes(b, loc, result, op.getDpsInits()[0],
                     indicesAt(b, loc, op.getIndexingMapsArray().back(), at), mask);
  }

  /// Whether a read gathered where no bounds check versions it: a kernel
  /// whose reads do not run along the lanes, better left to the row loops
  /// or scalar code.
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

  /// Lane `lane`'s scalar of uniform or affine `lanes`.
  Value laneScalar(const Lanes &lanes, int64_t lane) {
    if (lanes.kind == Lanes::Uniform || lane == 0 || lanes.stride == 0)
      return lanes.value;
    return arith::AddIOp::create(b, loc, lanes.value, index(lanes.stride * lane));
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

  void emitLoop(scf::ForOp loop) {
    Value lower = get(loop.getLowerBound()).value, upper = get(loop.getUpperBound()).value,
          step = get(loop.getStep()).value;
    SmallVector<Value> inits;
    for (Value init : loop.getInitArgs())
      inits.push_back(vector(init));
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
                      host::loadLanes(b, loc, type, memref, where, loadMask ? loadMask : mask)});
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
      int64_t span = 2 * active - 1;
      Value low = host::loadLanes(b, loc, type, memref, where, laneMask(std::min(span, width)));
      Value high;
      if (span > width) {
        where.back() = arith::AddIOp::create(b, loc, where.back(), index(width));
        high = host::loadLanes(b, loc, type, memref, where, laneMask(span - width));
      } else {
        high = host::splat(b, loc, type, b.getF32FloatAttr(0));
      }
      SmallVector<int64_t> evens;
      for (int64_t lane = 0; lane < width; ++lane)
        evens.push_back(2 * lane);
      define(load, {Lanes::Varying, vector::ShuffleOp::create(b, loc, low, high, evens)});
      return;
    }
    // Anything else gathers, from the buffer seen as one dimension.
    if (!onEdge)
      gathered = true;
    MemRefType memrefType = load.getMemRefType();
    Value offsets;
    int64_t stride = 1;
    for (int64_t d = memrefType.getRank() - 1; d >= 0; --d) {
      Value term = materialize(indices[d], b.getIndexType());
      if (stride != 1)
        term = arith::MulIOp::create(
            b, loc, term, materialize({Lanes::Uniform, index(stride)}, b.getIndexType()));
      offsets = offsets ? arith::AddIOp::create(b, loc, offsets, term).getResult() : term;
      stride *= memrefType.getDimSize(d);
    }
    SmallVector<ReassociationIndices> all = {
        llvm::to_vector(llvm::seq<int64_t>(0, memrefType.getRank()))};
    Value flat = memref::CollapseShapeOp::create(b, loc, memref, all);
    Value zeros = host::splat(b, loc, type, b.getF32FloatAttr(0));
    Value lanes = loadMask ? loadMask
                           : vector::ConstantMaskOp::create(b, loc, vectorOf(b.getI1Type()),
                                                            ArrayRef<int64_t>{active});
    define(load, {Lanes::Varying, vector::GatherOp::create(b, loc, type, flat, ValueRange{index(0)},
                                                           offsets, lanes, zeros)});
  }

  /// The mask of the first `lanes` lanes.
  Value laneMask(int64_t lanes) {
    if (lanes >= width)
      return Value();
    return vector::ConstantMaskOp::create(b, loc, vectorOf(b.getI1Type()),
                                          ArrayRef<int64_t>{lanes});
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
      Type type = select.getType();
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
      for (int64_t lane : {int64_t(0), active - 1}) {
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
  int64_t active = 0;
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

/// The lanes `op` runs on: a vector register's, or fewer (a power of two)
/// for a shorter innermost dimension; 0 when vectors do not pay (fewer than
/// 4 iterations along it, or a body this pass does not handle).
int64_t windowLanes(linalg::GenericOp op, int64_t width) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !isAllParallel(op) ||
      op.getNumLoops() == 0 || !host::hasLaneOperands(op))
    return 0;
  int64_t extent = op.getStaticLoopRanges().back();
  if (extent < 4)
    return 0;
  LaneDependence varies(op);
  if (!hasWindowBody(op, varies))
    return 0;
  int64_t lanes = std::min<int64_t>(width, llvm::PowerOf2Ceil(extent));
  // A trial emission in a block of its own: does every read run along the
  // lanes, away from the edges?
  Block scratch;
  OpBuilder b(op.getContext());
  b.setInsertionPointToEnd(&scratch);
  SmallVector<Value> at;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    at.push_back(arith::ConstantIndexOp::create(b, op.getLoc(), 0));
  WindowEmitter trial(op, lanes, b, varies);
  trial.emit(at, Value(), lanes);
  bool gathers = trial.gathersInside();
  scratch.clear();
  return gathers ? 0 : lanes;
}

struct VectorizeWindows : impl::VectorizeWindowsBase<VectorizeWindows> {
  using VectorizeWindowsBase::VectorizeWindowsBase;

  void runOnOperation() override {
    FailureOr<int64_t> width =
        host::vectorLanes(getOperation(), "kiln-vectorize-windows", vectorBits);
    if (failed(width))
      return signalPassFailure();
    SmallVector<std::pair<linalg::GenericOp, int64_t>> kernels;
    getOperation().walk([&](linalg::GenericOp op) {
      if (int64_t lanes = windowLanes(op, *width))
        kernels.push_back({op, lanes});
    });
    for (auto [op, lanes] : kernels) {
      OpBuilder b(op);
      LaneDependence varies(op);
      host::forEachVector(b, op.getLoc(), op.getStaticLoopRanges(), lanes,
                          [&](ArrayRef<Value> at, Value mask, int64_t active) {
                            WindowEmitter(op, lanes, b, varies).emit(at, mask, active);
                          });
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
