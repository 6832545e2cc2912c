// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- LowerToLinalg.cpp - kiln ops to linalg via the kernel generators ---===//

#include "codegen/kernels/Passes.h"

#include "codegen/kernels/Kernels.h"
#include "dialects/kiln/KilnDialect.h"

#include "codegen/kernels/Builders.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_LOWERTOLINALG
#include "codegen/kernels/Passes.h.inc"

namespace {

/// Weights become arith.constant, which bufferization places in memory; a
/// constant without elements is only a shape (no zero-byte weight).
struct ConstantToArith : mlir::OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(ConstantOp op,
                                      mlir::PatternRewriter &rewriter) const override {
    mlir::RankedTensorType type = op.getType();
    if (type.getNumElements() == 0) {
      rewriter.replaceOpWithNewOp<mlir::tensor::EmptyOp>(op, type.getShape(),
                                                         type.getElementType());
      return mlir::success();
    }
    rewriter.replaceOpWithNewOp<mlir::arith::ConstantOp>(
        op, op.getType(), mlir::cast<mlir::TypedAttr>(op.getValue()));
    return mlir::success();
  }
};

/// A kiln.dims value used as a tensor: its sizes computed from the
/// symbols' values.
struct DimsToTensor : mlir::OpRewritePattern<DimsOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(DimsOp op, mlir::PatternRewriter &rewriter) const override {
    mlir::Type element = op.getType().getElementType();
    llvm::SmallVector<mlir::Value> symbols = symbolValues(rewriter), elements;
    for (mlir::AffineExpr size : op.getValue().getMap().getResults())
      elements.push_back(mlir::arith::IndexCastOp::create(
          rewriter, op.getLoc(), element,
          mlir::affine::expandAffineExpr(rewriter, op.getLoc(), size, mlir::ValueRange{},
                                         symbols)));
    rewriter.replaceOpWithNewOp<mlir::tensor::FromElementsOp>(op, op.getType(), elements);
    return mlir::success();
  }
};

/// Why the kernel generators cannot take `op` yet when its shapes are
/// symbolic; nothing when they can.
std::optional<std::string> symbolicUnsupported(mlir::Operation *op) {
  auto symbolic = [](mlir::TypeRange types) { return llvm::any_of(types, isSymbolic); };
  if (!symbolic(op->getOperandTypes()) && !symbolic(op->getResultTypes()))
    return std::nullopt;
  if (mlir::isa<PadOp, ArgMaxOp, ArgMinOp, CumSumOp, GatherElementsOp, GatherNDOp,
                ScatterElementsOp, ScatterNDOp>(op))
    return "its kernel generator takes static shapes only";
  // Wider ones are built in groups, whose buffers take static sizes.
  if (auto split = mlir::dyn_cast<SplitOp>(op); split && split.getNumResults() > kGroupWidth)
    return "it has more than " + std::to_string(kGroupWidth) + " outputs";
  if (auto concat = mlir::dyn_cast<ConcatOp>(op); concat && concat.getInputs().size() > kGroupWidth)
    return "it has more than " + std::to_string(kGroupWidth) + " inputs";
  if (auto slice = mlir::dyn_cast<SliceOp>(op);
      slice && llvm::any_of(slice.getSteps(), [](int64_t step) { return step < 0; }))
    return "it reverses an axis of a tensor of symbolic shape";
  if (auto norm = mlir::dyn_cast<LayerNormOp>(op);
      norm && llvm::any_of(norm.getType().getShape().drop_front(norm.getAxis()),
                           mlir::ShapedType::isDynamic))
    return "it normalizes over a symbolic dimension";
  if (auto gemm = mlir::dyn_cast<GemmOp>(op); gemm && isSymbolic(gemm.getB().getType()))
    return "its B has a symbolic shape";
  return std::nullopt;
}

/// Gives @main one index argument per symbol, after its tensors, and
/// records each symbolic input's and output's dimensions (kDimsArgAttr).
void addSymbolArguments(mlir::ModuleOp module) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    return;
  mlir::Builder b(module.getContext());
  auto dimsAttr = [&](mlir::Type type) {
    return DimsAttr::get(b.getContext(), dimsMap(b.getContext(), dimsOf(type)));
  };
  for (auto [i, type] : llvm::enumerate(main.getArgumentTypes()))
    if (isSymbolic(type))
      main.setArgAttr(i, kDimsArgAttr, dimsAttr(type));
  for (auto [i, type] : llvm::enumerate(main.getResultTypes()))
    if (isSymbolic(type))
      main.setResultAttr(i, kDimsArgAttr, dimsAttr(type));
  for (const std::string &name : symbolNames(module)) {
    unsigned index = main.getNumArguments();
    if (failed(main.insertArgument(
            index, b.getIndexType(),
            b.getDictionaryAttr(b.getNamedAttr(kSymbolArgAttr, b.getStringAttr(name))),
            main.getLoc())))
      return;
  }
}

/// Replaces each size of @main's inputs that a kernel reads (tensor.dim)
/// by its expression of the symbols: from here on every size is computed
/// from the symbols' values.
void sizeInputsFromSymbols(mlir::ModuleOp module) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main || main.isExternal())
    return;
  llvm::SmallVector<mlir::tensor::DimOp> dims;
  main.walk([&](mlir::tensor::DimOp dim) { dims.push_back(dim); });
  for (mlir::tensor::DimOp dim : dims) {
    auto argument = mlir::dyn_cast<mlir::BlockArgument>(dim.getSource());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!argument || argument.getOwner()->getParentOp() != main || !index ||
        !isSymbolic(argument.getType()))
      continue;
    mlir::OpBuilder b(dim);
    b.setInsertionPointToStart(&main.front());
    mlir::AffineExpr size = dimsOf(argument.getType())[*index];
    dim.replaceAllUsesWith(
        mlir::affine::expandAffineExpr(b, dim.getLoc(), size, mlir::ValueRange{}, symbolValues(b)));
    dim.erase();
  }
}

/// Drops the #kiln.dims encodings from every type: the sizes are values
/// from here on, and linalg, bufferization and lowering take plain
/// dynamic shapes.
void dropDimsEncodings(mlir::ModuleOp module) {
  mlir::AttrTypeReplacer replacer;
  replacer.addReplacement([](mlir::RankedTensorType type) -> std::optional<mlir::Type> {
    if (!mlir::isa_and_nonnull<DimsAttr>(type.getEncoding()))
      return std::nullopt;
    return mlir::RankedTensorType::get(type.getShape(), type.getElementType());
  });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}

struct LowerToLinalg : impl::LowerToLinalgBase<LowerToLinalg> {
  void runOnOperation() override {
    mlir::MLIRContext *context = &getContext();
    mlir::ModuleOp module = getOperation();
    bool symbolic = static_cast<bool>(module->getAttr(kSymbolsAttr));
    if (symbolic) {
      bool unsupported = false;
      module.walk([&](mlir::Operation *op) {
        if (op->getDialect() && mlir::isa<KilnDialect>(op->getDialect()))
          if (std::optional<std::string> why = symbolicUnsupported(op)) {
            op->emitError("kiln cannot generate this '")
                << op->getName() << "' for symbolic shapes yet: " << *why;
            unsupported = true;
          }
      });
      if (unsupported)
        return signalPassFailure();
      addSymbolArguments(module);
    }
    eraseSignedness(module);
    mlir::RewritePatternSet patterns(context);
    patterns.add<ConstantToArith, DimsToTensor>(context);
    populateMatmulLikeKernels(patterns);
    populateElementwiseKernels(patterns);
    populateReductionKernels(patterns);
    populateDataMovementKernels(patterns);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // Name every op that no generator handled, not only the first.
    bool missing = false;
    getOperation().walk([&](mlir::Operation *op) {
      if (op->getDialect() && mlir::isa<KilnDialect>(op->getDialect())) {
        op->emitError("no kernel generator handles this '") << op->getName() << "' yet";
        missing = true;
      }
    });
    if (missing)
      return signalPassFailure();
    if (symbolic) {
      sizeInputsFromSymbols(module);
      dropDimsEncodings(module);
    }
  }
};

} // namespace
} // namespace kiln
