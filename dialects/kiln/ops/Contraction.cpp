// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Contraction.cpp - conv, gemm and matmul ----------------------------===//

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Shapes.h"
#include "dialects/kiln/Weights.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  int64_t rank = input.getRank(), spatial = rank - 2;
  if (rank < 3)
    return emitOptionalError(location, "input must have rank 3 or more, got ", input);
  if (weight.getRank() != rank)
    return emitOptionalError(location, "weight rank ", weight.getRank(),
                             " differs from input rank ", rank);
  bool last = adaptor.getChannelsLast();
  if (last) {
    int64_t group = int64_t(adaptor.getGroup());
    bool depthwise = weight.getDimSize(rank - 2) == 1 && weight.getShape().back() == group;
    if (group != 1 && !depthwise)
      return emitOptionalError(location,
                               "channels_last convolutions have one group or are depthwise");
    // K1..Kk x C x M reads as M x C x K1..Kk.
    SmallVector<int64_t> shape = {weight.getShape().back(), weight.getDimSize(rank - 2)};
    llvm::append_range(shape, weight.getShape().drop_back(2));
    input = channelsFirst(input);
    weight = weight.clone(shape);
  }
  if (weight.getElementType() != input.getElementType() ||
      (adaptor.getBias() &&
       getElementTypeOrSelf(adaptor.getBias().getType()) != input.getElementType()))
    return emitOptionalError(location, "input, weight and bias element types differ");
  ArrayRef<int64_t> strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations();
  if (int64_t(strides.size()) != spatial || int64_t(dilations.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial)
    return emitOptionalError(location, "expected ", spatial, " strides, ", spatial,
                             " dilations and ", 2 * spatial, " pads for ", spatial,
                             " spatial dimensions");
  int64_t group = int64_t(adaptor.getGroup());
  if (isSymbolic(weight) || input.isDynamicDim(1))
    return emitOptionalError(location, "channels and weights must have static sizes, got ", input,
                             " and ", weight);
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  if (group < 1 || channels % group != 0 || filters % group != 0)
    return emitOptionalError(location, "group ", group, " must divide input channels ", channels,
                             " and filters ", filters);
  if (weight.getDimSize(1) != channels / group)
    return emitOptionalError(location, "weight has ", weight.getDimSize(1),
                             " channels per group, expected ", channels / group);
  if (Value bias = adaptor.getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != filters)
      return emitOptionalError(location, "bias must have shape [", filters, "], got ", biasType);
  }
  Dims inputDims = dimsOf(input);
  Dims dims = {inputDims[0], getAffineConstantExpr(filters, input.getContext())};
  for (int64_t i = 0; i < spatial; ++i) {
    auto size = windowOutputDim(inputDims[i + 2], weight.getDimSize(i + 2), strides[i], pads[i],
                                pads[i + spatial], dilations[i], /*ceilMode=*/false);
    if (!size)
      return emitOptionalError(location, "kernel does not fit spatial dimension ", i, " (size ",
                               printDim(inputDims[i + 2], {}), ")");
    dims.push_back(*size);
  }
  auto result = tensorOf(dims, input.getElementType());
  types.push_back(last ? channelsLast(result) : result);
  return success();
}

bool ConvOp::isDepthwise() {
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  bool last = getChannelsLast();
  int64_t perGroup = last ? weight[weight.size() - 2] : weight[1];
  int64_t filters = last ? weight.back() : weight[0];
  int64_t group = int64_t(getGroup());
  return group > 1 && perGroup == 1 && filters == group;
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto a = cast<RankedTensorType>(adaptor.getA().getType());
  auto b = cast<RankedTensorType>(adaptor.getB().getType());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(location, "operands must be matrices, got ", a, " and ", b);
  if (a.getElementType() != b.getElementType() ||
      (adaptor.getC() && getElementTypeOrSelf(adaptor.getC().getType()) != a.getElementType()))
    return emitOptionalError(location, "operand element types differ");
  bool transA = adaptor.getTransA(), transB = adaptor.getTransB();
  Dims aDims = dimsOf(a), bDims = dimsOf(b);
  AffineExpr m = aDims[transA ? 1 : 0], k = aDims[transA ? 0 : 1];
  AffineExpr kb = bDims[transB ? 1 : 0], n = bDims[transB ? 0 : 1];
  if (k != kb)
    return emitOptionalError(location, "inner dimensions differ: ", printDim(k, {}), " vs ",
                             printDim(kb, {}));
  Dims dims = {m, n};
  if (Value c = adaptor.getC()) {
    auto broadcast = broadcastDims(dimsOf(c.getType()), dims);
    if (!broadcast || *broadcast != dims)
      return emitOptionalError(location, "C of type ", c.getType(), " does not broadcast to ",
                               printDims(dims, {}));
  }
  types.push_back(tensorOf(dims, a.getElementType()));
  return success();
}

namespace {

/// A Gemm whose B is a transposed constant reads the constant transposed
/// at compile time instead: the product then reads B along its rows, with
/// no transpose kernel run on every inference.
struct TransposeConstantB : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp op, PatternRewriter &rewriter) const override {
    auto constant = op.getB().getDefiningOp<ConstantOp>();
    if (!op.getTransB() || !constant)
      return rewriter.notifyMatchFailure(op, "B is not a transposed constant");
    std::optional<std::vector<float>> values = readF32(constant.getValue());
    if (!values)
      return rewriter.notifyMatchFailure(op, "B is not f32");
    auto type = op.getB().getType();
    int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
    std::vector<float> transposed(values->size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < columns; ++c)
        transposed[c * rows + r] = (*values)[r * columns + c];
    std::string name = derivedName(constant.getValue(), "transposed");
    auto transposedType = RankedTensorType::get({columns, rows}, type.getElementType());
    Value b =
        ConstantOp::create(rewriter, constant.getLoc(), makeF32(transposedType, transposed, name));
    rewriter.modifyOpInPlace(op, [&] {
      op.getBMutable().assign(b);
      op.setTransB(false);
    });
    return success();
  }
};

} // namespace

void GemmOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<TransposeConstantB>(context);
}

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return emitOptionalError(location, "operands must not be scalars");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(location, "operand element types differ");
  // NumPy promotes a 1-D operand to a matrix and drops that dimension after.
  MLIRContext *context = lhs.getContext();
  AffineExpr one = getAffineConstantExpr(1, context);
  Dims a = dimsOf(lhs), b = dimsOf(rhs);
  if (a.size() == 1)
    a.insert(a.begin(), one);
  if (b.size() == 1)
    b.push_back(one);
  if (a.back() != b[b.size() - 2])
    return emitOptionalError(location, "inner dimensions differ: ", printDim(a.back(), {}), " vs ",
                             printDim(b[b.size() - 2], {}));
  auto batch = broadcastDims(ArrayRef(a).drop_back(2), ArrayRef(b).drop_back(2));
  if (!batch)
    return emitOptionalError(location, "batch dimensions of ", lhs, " and ", rhs,
                             " do not broadcast");
  Dims dims = *batch;
  if (lhs.getRank() > 1)
    dims.push_back(a[a.size() - 2]);
  if (rhs.getRank() > 1)
    dims.push_back(b.back());
  types.push_back(tensorOf(dims, lhs.getElementType()));
  return success();
}

} // namespace kiln
