// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- TopK.cpp - TopK as K rounds of selection ---------------------------===//
//
// TopK (largest or smallest, sorted) becomes K rounds, unrolled at import:
// each finds the best value among the elements not yet taken and the first
// index holding it, then marks that index taken. Ties go to the lower
// index, as ONNX specifies; a NaN ranks before every number. Each round is
// a handful of elementwise ops and reductions over the axis, so the cost is
// K passes over the input: meant for the small K of classifiers and
// beam search, and refused above kMaxTopK.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

namespace {

constexpr int64_t kMaxTopK = 256;

/// The value no element can lose to: the lowest for the largest K, the
/// highest for the smallest.
Attribute worstValue(Type element, bool largest, bool isUnsigned) {
  if (auto real = dyn_cast<FloatType>(element))
    return FloatAttr::get(element, APFloat::getInf(real.getFloatSemantics(), largest));
  unsigned width = element.getIntOrFloatBitWidth();
  APInt value = largest
                    ? (isUnsigned ? APInt::getMinValue(width) : APInt::getSignedMinValue(width))
                    : (isUnsigned ? APInt::getMaxValue(width) : APInt::getSignedMaxValue(width));
  return IntegerAttr::get(element, value);
}

LogicalResult convertTopK(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  std::optional<int64_t> axis = ctx.axisAttr(-1, type.getRank());
  std::optional<SmallVector<int64_t>> given = ctx.constantInts(1, "K");
  if (!axis || !given)
    return failure();
  if (given->size() != 1)
    return ctx.error() << "K must hold one value, not " << given->size();
  int64_t k = given->front(), extent = type.getDimSize(*axis);
  if (k < 0 || k > extent)
    return ctx.error() << "K = " << k << " is outside [0, " << extent << "], the size of axis "
                       << *axis;
  if (k > kMaxTopK)
    return ctx.error() << "K = " << k << " is more than kiln's " << kMaxTopK
                       << ": TopK is unrolled into K rounds when compiling";
  if (ctx.intAttr("sorted", 1) == 0)
    return ctx.error() << "sorted = 0 is not supported; kiln returns the K elements in order";
  bool largest = ctx.intAttr("largest", 1) != 0;
  Builder &b = ctx.builder();
  Type element = type.getElementType(), i32 = b.getI32Type(), i64 = b.getI64Type();
  SmallVector<int64_t> shape(type.getShape());
  shape[*axis] = k;
  if (k == 0) {
    ctx.setOutput(0,
                  ctx.constant(DenseElementsAttr::get(type.clone(shape), ArrayRef<Attribute>{})));
    ctx.setOutput(1, ctx.constant(DenseElementsAttr::get(RankedTensorType::get(shape, i64),
                                                         ArrayRef<Attribute>{})));
    return success();
  }

  // Each position's index along the axis, to mark an index taken.
  SmallVector<int64_t> iotaShape(type.getRank(), 1);
  iotaShape[*axis] = extent;
  auto iota = llvm::to_vector(llvm::seq<int64_t>(0, extent));
  Value positions = ctx.constant(
      DenseElementsAttr::get(RankedTensorType::get(iotaShape, i64), ArrayRef<int64_t>(iota)));
  Value worst = ctx.constant(
      DenseElementsAttr::get(RankedTensorType::get({}, element),
                             worstValue(element, largest, element.isUnsignedInteger())));
  SmallVector<NamedAttribute> along = {ctx.named("axes", b.getDenseI64ArrayAttr(*axis)),
                                       ctx.named("keepdims", b.getBoolAttr(true))};
  SmallVector<NamedAttribute> first = {ctx.named("axis", b.getI64IntegerAttr(*axis)),
                                       ctx.named("keepdims", b.getBoolAttr(true)),
                                       ctx.named("select_last_index", b.getBoolAttr(false))};

  Value x = ctx.input(0), taken;
  SmallVector<Value> values, indices;
  for (int64_t round = 0; round < k; ++round) {
    Value key = taken ? ctx.make<WhereOp>({taken, worst, x}) : x;
    Value best = !key      ? Value()
                 : largest ? ctx.make<ReduceMaxOp>({key}, along)
                           : ctx.make<ReduceMinOp>({key}, along);
    Value hit = best ? ctx.make<EqualOp>({key, best}) : Value();
    if (hit && isa<FloatType>(element)) {
      Value nan = ctx.make<IsNaNOp>({key});
      hit = nan ? ctx.make<OrOp>({hit, nan}) : Value();
    }
    if (hit && taken) {
      Value open = ctx.make<NotOp>({taken});
      hit = open ? ctx.make<AndOp>({hit, open}) : Value();
    }
    // The first index among the hits.
    Value flags = ctx.castTo(hit, i32);
    Value index = flags ? ctx.make<ArgMaxOp>({flags}, first) : Value();
    if (!index)
      return failure();
    values.push_back(best);
    indices.push_back(index);
    if (round + 1 == k)
      break;
    Value mark = ctx.make<EqualOp>({positions, index});
    taken = !mark ? Value() : taken ? ctx.make<OrOp>({taken, mark}) : mark;
    if (!taken)
      return failure();
  }
  auto joined = [&](SmallVector<Value> &parts) {
    if (parts.size() == 1)
      return parts.front();
    return ctx.make<ConcatOp>(parts, {ctx.named("axis", b.getI64IntegerAttr(*axis))});
  };
  Value topValues = joined(values), topIndices = joined(indices);
  if (!topValues || !topIndices)
    return failure();
  ctx.setOutput(0, topValues);
  ctx.setOutput(1, topIndices);
  return success();
}

} // namespace

void registerTopKOperators(OperatorTable &ops) { ops.onOp("TopK", 1, convertTopK); }

} // namespace kiln
