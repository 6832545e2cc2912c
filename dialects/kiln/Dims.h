// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Dims.h - tensor dimensions as expressions of symbols -----*- C++ -*-===//
//
// A kiln tensor's dimension is a size or an expression of the module's
// symbols, the sizes a model takes at run time. A type with symbolic
// dimensions is `?` there and holds all of its dimensions in a
// #kiln.dims encoding:
//
//   tensor<?x128x768xf32, #kiln.dims<()[s0] -> (s0, 128, 768)>>
//
// Symbol i is the module's kiln.symbols[i]. Static types carry no
// encoding, so a model without symbols has exactly the types it always had.
// Type inference works on the dimensions as affine expressions, whose
// constants fold: the same code infers static and symbolic shapes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_DIMS_H
#define KILN_DIALECTS_KILN_DIMS_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace kiln {

using Dims = llvm::SmallVector<mlir::AffineExpr>;

/// The module attribute listing the symbols (an array of #kiln.symbol).
constexpr llvm::StringLiteral kSymbolsAttr = "kiln.symbols";
/// From kernel generation on, @main takes each symbol's value at run time
/// as an `index` argument after the tensors, in symbol order; this
/// argument attribute names the symbol.
constexpr llvm::StringLiteral kSymbolArgAttr = "kiln.symbol";
/// From kernel generation on, each symbolic input and output of @main
/// keeps its dimensions in this argument or result attribute (a
/// #kiln.dims), for the memory plan and the artifact's signature.
constexpr llvm::StringLiteral kDimsArgAttr = "kiln.dims";

/// The dimensions of a ranked tensor type: constants for static sizes, its
/// #kiln.dims encoding's expressions for symbolic ones.
Dims dimsOf(mlir::Type type);
/// The dimensions of a shape, all constant.
Dims constantDims(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> shape);

/// A tensor of `element` with `dims`: static when every dimension is a
/// constant, else `?` at each symbolic one with the expressions in its
/// encoding. Expressions are simplified first, so that equal sizes are
/// equal expressions as far as affine simplification sees.
mlir::RankedTensorType tensorOf(llvm::ArrayRef<mlir::AffineExpr> dims, mlir::Type element);
/// `like`'s element type with `dims`.
mlir::RankedTensorType withDims(mlir::RankedTensorType like, llvm::ArrayRef<mlir::AffineExpr> dims);

/// Each of `dims` as a static size: its constant, or ShapedType::kDynamic
/// (`?`) for an expression of symbols, as a shape or a `shape` attribute
/// spells it.
llvm::SmallVector<int64_t> staticSizes(llvm::ArrayRef<mlir::AffineExpr> dims);

/// Whether `type` is a tensor with a symbolic dimension.
bool isSymbolic(mlir::Type type);
/// Whether `type` is a valid kiln tensor: static with an element count
/// that fits in int64_t, or symbolic with an encoding that gives each
/// dimension (a constant where the type is static, an expression of
/// symbols where it is `?`).
bool isKilnTensor(mlir::Type type);

/// The size `dim` is when it is a constant.
std::optional<int64_t> constantOf(mlir::AffineExpr dim);
/// The product of `dims` (1 for none).
mlir::AffineExpr productOf(mlir::MLIRContext *context, llvm::ArrayRef<mlir::AffineExpr> dims);

/// Whether two sizes are equal: the same expression, or, for expressions
/// that simplification does not make the same (products of symbols in
/// another order), equal at several values of every symbol.
bool sameSize(mlir::AffineExpr a, mlir::AffineExpr b);

/// The size that multiplied by the product of `known` gives the product of
/// `total`: what -1 stands for in a reshape. Factors equal on both sides
/// cancel, constants divide; nothing when what remains of `known` is not a
/// constant dividing what remains of `total`.
std::optional<mlir::AffineExpr> remainingSize(mlir::MLIRContext *context,
                                              llvm::ArrayRef<mlir::AffineExpr> total,
                                              llvm::ArrayRef<mlir::AffineExpr> known);

/// The NumPy broadcast of two shapes' dimensions: equal dimensions, or 1
/// against anything. Nothing when a pair differs otherwise (two different
/// symbols included: which of them is 1 would be known only at run time).
std::optional<Dims> broadcastDims(llvm::ArrayRef<mlir::AffineExpr> a,
                                  llvm::ArrayRef<mlir::AffineExpr> b);

/// The output size of a window along one dimension (see windowOutputSize)
/// over an input of size `input`; nothing when it cannot fit. A symbolic
/// input takes floor mode only.
std::optional<mlir::AffineExpr> windowOutputDim(mlir::AffineExpr input, int64_t kernel,
                                                int64_t stride, int64_t padBegin, int64_t padEnd,
                                                int64_t dilation, bool ceilMode);

/// A #kiln.dims map of `exprs`, with as many symbols as the highest one
/// they use.
mlir::AffineMap dimsMap(mlir::MLIRContext *context, llvm::ArrayRef<mlir::AffineExpr> exprs);

/// The names of the module's symbols, in order (symbol i is s_i).
llvm::SmallVector<std::string> symbolNames(mlir::ModuleOp module);

/// `dim` with symbol i named `names[i]` (s_i past their end): "batch *
/// 128", "past + 1".
std::string printDim(mlir::AffineExpr dim, llvm::ArrayRef<std::string> names);
/// "[batch, 128, 768]".
std::string printDims(llvm::ArrayRef<mlir::AffineExpr> dims, llvm::ArrayRef<std::string> names);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_DIMS_H
