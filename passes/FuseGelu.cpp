// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- FuseGelu.cpp - the Erf form of GELU, whole -------------------------===//
//
// Exporters write GELU (before its opset-20 operator) as
//
//   c = Erf(x / sqrt(2)) + 1          (or Erf(x * 1/sqrt(2)))
//   y = x * c * 0.5                   (the three factors in any grouping)
//
// Five kernels; this pass makes each such chain one kiln.gelu whose
// location fuses every node's. The intermediate values must have no user
// outside the chain.
//
//===----------------------------------------------------------------------===//

#include "passes/Matching.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {

#define GEN_PASS_DEF_FUSEGELU
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// Whether `value` is a splat f32 kiln.constant within float rounding of
/// `expected`.
bool isSplat(Value value, double expected) {
  std::optional<float> splat = splatF32(value);
  return splat && std::fabs(*splat - expected) <= 1e-6 * std::fabs(expected);
}

/// The sole user of `value` when it is a kiln.mul, or null.
MulOp soleMul(Value value) { return dyn_cast_or_null<MulOp>(soleUser(value)); }

struct FuseErfForm : OpRewritePattern<ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ErfOp erf, PatternRewriter &rewriter) const override {
    // a = x / sqrt(2) or x * (1 / sqrt(2)).
    Operation *scaled = erf.getInput().getDefiningOp();
    Value x;
    if (auto div = dyn_cast_or_null<DivOp>(scaled); div && isSplat(div.getRhs(), M_SQRT2))
      x = div.getLhs();
    else if (auto mul = dyn_cast_or_null<MulOp>(scaled)) {
      if (isSplat(mul.getRhs(), M_SQRT1_2))
        x = mul.getLhs();
      else if (isSplat(mul.getLhs(), M_SQRT1_2))
        x = mul.getRhs();
    }
    auto type = cast<RankedTensorType>(erf.getType());
    if (!x || x.getType() != type || !type.getElementType().isF32() || !scaled->hasOneUse() ||
        !erf->hasOneUse())
      return failure();
    // c = erf + 1.
    auto plus = dyn_cast<AddOp>(*erf->getUsers().begin());
    if (!plus || plus.getType() != type || !isSplat(otherOperand(plus, erf), 1.0))
      return failure();
    Value c = plus.getResult();

    // y = x * c * 0.5, grouped as (x * c) * 0.5, (x * 0.5) * c or
    // x * (c * 0.5).
    SmallVector<Operation *> products;
    MulOp first = soleMul(c);
    if (!first || first.getType() != type)
      return failure();
    products.push_back(first);
    Value partner = otherOperand(first, c);
    Operation *last = nullptr;
    if (partner == x || isSplat(partner, 0.5)) {
      // (x * c) * 0.5 or (c * 0.5) * x: the second product takes the rest.
      MulOp second = soleMul(first.getResult());
      Value rest = second ? otherOperand(second, first.getResult()) : nullptr;
      if (rest && second.getType() == type && (partner == x ? isSplat(rest, 0.5) : rest == x)) {
        products.push_back(second);
        last = second;
      }
    } else if (auto half = partner.getDefiningOp<MulOp>(); half && half->hasOneUse() &&
                                                           otherOperand(half, x) &&
                                                           isSplat(otherOperand(half, x), 0.5)) {
      // (x * 0.5) * c.
      products.push_back(half);
      last = first;
    }
    if (!last)
      return failure();

    SmallVector<Location> locs = {scaled->getLoc(), erf.getLoc(), plus.getLoc()};
    for (Operation *product : products)
      locs.push_back(product->getLoc());
    Value gelu = GeluOp::create(rewriter, rewriter.getFusedLoc(locs), x);
    rewriter.replaceOp(last, gelu);
    return success();
  }
};

struct FuseGelu : impl::FuseGeluBase<FuseGelu> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseErfForm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
