// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- LowerToLLVM.cpp - host code to LLVM in one conversion --------------===//
//
// MLIR's conversion passes each walk the whole module and run a dialect
// conversion of their own: vector, memref, arith, index, func and cf, one
// after the other, then a canonicalization of the result. On a module of a
// few hundred kernels (DenseNet-121: 7 MB of LLVM IR), those walks took a
// quarter of the host's code generation, for what one conversion with every
// pattern does at once. LLVM's optimizer, which runs next, folds whatever a
// canonicalization would have.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_LOWERTOLLVM
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// What convert-vector-to-llvm does before it converts: vector ops LLVM has
/// no form of become ones it has (contractions to multiply-adds, masks to
/// compares of a step vector, transposes to shuffles, transfers of rank 1
/// to loads and stores); and what arith-expand does: arith ops with no LLVM
/// instruction (ceildivsi, maximumf, ...) and bf16 conversions become
/// integer and f32 arithmetic, since the code loads without compiler-rt.
void populateExpansions(RewritePatternSet &patterns) {
  vector::populateVectorToVectorCanonicalizationPatterns(patterns);
  vector::populateVectorBitCastLoweringPatterns(patterns);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorContractLoweringPatterns(patterns, vector::VectorContractLowering::Dot);
  vector::populateVectorMaskOpLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorInterleaveLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(patterns,
                                                  vector::VectorTransposeLowering::EltWise);
  vector::populateVectorTransferLoweringPatterns(patterns, /*maxTransferRank=*/1);
  vector::populateVectorMaskMaterializationPatterns(patterns, /*force32BitVectorIndices=*/true);
  vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
  vector::populateVectorStepLoweringPatterns(patterns);
  vector::populateVectorRankReducingFMAPattern(patterns);
  vector::populateVectorGatherLoweringPatterns(patterns);
  arith::populateArithExpandOpsPatterns(patterns);
  arith::populateExpandBFloat16Patterns(patterns);
}

struct LowerToLLVM : impl::LowerToLLVMBase<LowerToLLVM> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    RewritePatternSet expansions(context);
    populateExpansions(expansions);
    if (failed(applyPatternsGreedily(module, std::move(expansions))))
      return signalPassFailure();

    LowerToLLVMOptions options(context);
    // Functions take bare pointers, not memref descriptors: kiln_entry
    // passes the runtime's buffers as they are.
    options.useBarePtrCallConv = true;
    LLVMTypeConverter converter(context, options);
    SymbolTableCollection symbolTables;
    RewritePatternSet patterns(context);
    vector::populateVectorTransferLoweringPatterns(patterns);
    populateVectorToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns, &symbolTables);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns, &symbolTables);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*context);
    target.addLegalOp<ModuleOp>();
    // MLIR 22's conversion without rollback saves 3% of DenseNet-121's
    // compile, but ends a pattern's failure in a fatal error rather than a
    // diagnostic: rollback stays.
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
