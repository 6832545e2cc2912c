// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ApproximateMath.cpp - math functions as inline polynomials ---------===//
//
// LLVM lowers exp, log, tanh and erf on f32 to libm calls, one per element
// (the vector forms unrolled into one call per lane): a Softmax, a GELU or
// a sigmoid then costs tens of cycles an element and no loop around it
// vectorizes. MLIR's polynomial approximations compute them with
// arithmetic alone, within a few units in the last place, on scalars and on
// vectors alike.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_APPROXIMATEMATH
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

struct ApproximateMath : impl::ApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    static constexpr llvm::StringLiteral kApproximated[] = {
        "math.exp", "math.expm1", "math.log", "math.log1p", "math.log2", "math.tanh", "math.erf"};
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return llvm::is_contained(kApproximated, name); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
