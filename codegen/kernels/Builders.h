// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Builders.h - shared pieces of the kernel generators ------*- C++ -*-===//

#ifndef KILN_CODEGEN_KERNELS_BUILDERS_H
#define KILN_CODEGEN_KERNELS_BUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// Computes one result element from the operands' elements (the block
/// arguments of a linalg.generic, without the output).
using ScalarFn =
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The values of the symbols in the function `b` builds in: its arguments
/// marked kSymbolArgAttr, in symbol order.
llvm::SmallVector<mlir::Value> symbolValues(mlir::OpBuilder &b);

/// The sizes of `type`'s `?` dimensions, computed from the symbols' values
/// by its #kiln.dims expressions.
llvm::SmallVector<mlir::Value> dynamicSizes(mlir::OpBuilder &b, mlir::Location loc,
                                            mlir::RankedTensorType type);

/// `type`'s sizes as the tensor dialect's slices take them: constants, and
/// values for the symbolic ones.
llvm::SmallVector<mlir::OpFoldResult> mixedSizes(mlir::OpBuilder &b, mlir::Location loc,
                                                 mlir::RankedTensorType type);

/// An uninitialized tensor of `type` (static or symbolic).
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type);

/// The size of dimension `d` of the tensor `value`, as an index: a
/// constant, or tensor.dim.
mlir::Value dimSize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, int64_t d);

/// The map that reads `operand` broadcast (NumPy-style, trailing dimensions
/// aligned) onto an iteration space of `result`'s shape: missing leading
/// dimensions are dropped and dimensions of size 1 read index 0.
mlir::AffineMap broadcastMap(mlir::RankedTensorType operand, mlir::RankedTensorType result);

/// An elementwise linalg.generic producing `type` from broadcast `operands`.
mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                        mlir::ValueRange operands, ScalarFn fn);

/// The same with explicit indexing maps for the operands.
mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                        mlir::ValueRange operands, llvm::ArrayRef<mlir::AffineMap> maps,
                        ScalarFn fn);

/// A tensor of `type` filled with `value`.
mlir::Value filled(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                   mlir::TypedAttr value);

/// A scalar constant of a float or integer type.
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);

/// The smallest value of an element type (-inf for floats; integers signed
/// unless `isUnsigned`), the identity of a maximum.
mlir::TypedAttr lowestValue(mlir::Type type, bool isUnsigned = false);
/// The largest value of an element type (+inf for floats), the identity of
/// a minimum.
mlir::TypedAttr highestValue(mlir::Type type, bool isUnsigned = false);

/// The loop indices of the linalg op whose body `b` builds, one a dimension.
llvm::SmallVector<mlir::Value> loopIndices(mlir::OpBuilder &b, mlir::Location loc, int64_t rank);

/// `value` reshaped to `shape` (the same elements in row-major order),
/// through tensor.collapse_shape and tensor.expand_shape.
mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                    llvm::ArrayRef<int64_t> shape);
/// The same to a `target` type, which may be symbolic.
mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                    mlir::RankedTensorType target);

/// Where a sliding window reads along one spatial dimension: the input
/// index output * stride + offset * dilation - pad, and, when some window
/// overhangs the input there (`outputSize` positions of windows of
/// `kernel`), whether it is inside [0, inputSize) (`inside`) and the index
/// clamped to 0 outside (`clamped`; `position` itself otherwise).
struct WindowIndex {
  mlir::Value position, clamped, inside;
};
/// `all && next`, or `next` when `all` is null (no condition yet): the
/// running "inside the input" of a window's read.
mlir::Value both(mlir::OpBuilder &b, mlir::Location loc, mlir::Value all, mlir::Value next);

/// Whether some of `outputSize` windows of `kernel` (at `stride`,
/// `dilation`, after `pad`) overhangs an input of `inputSize`: where
/// windowIndex checks bounds. Either size may be one a run gives
/// (ShapedType::kDynamic): then some window may.
bool windowOverhangs(int64_t stride, int64_t dilation, int64_t pad, int64_t kernel,
                     int64_t inputSize, int64_t outputSize);

/// `inputSize` is a constant or, where a run gives it, its value computed
/// before the kernel (mixedSizes).
WindowIndex windowIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value output,
                        mlir::Value offset, int64_t stride, int64_t dilation, int64_t pad,
                        int64_t kernel, mlir::OpFoldResult inputSize, int64_t outputSize);

/// A kernel of a window per output (pooling, a depthwise convolution): an
/// all-parallel generic computing `type` whose body runs one loop per
/// extent of `window`, carrying values from `start`. `step` gets the
/// output's indices, the window offsets and the carried values, and returns
/// them updated; `finish` makes the element of what the loops carried out.
using WindowStep = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, llvm::ArrayRef<mlir::Value> outputAt,
    llvm::ArrayRef<mlir::Value> offsets, mlir::ValueRange carried)>;
using WindowFinish =
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange carried)>;
mlir::Value windowed(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                     llvm::ArrayRef<int64_t> window, llvm::ArrayRef<mlir::TypedAttr> start,
                     WindowStep step, WindowFinish finish);

enum class ReduceKind { Sum, Prod, Max, Min, Mean };

/// One step of a reduction of `kind`: the accumulated `acc` and `x`
/// (integers compared unsigned with `isUnsigned`).
mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, ReduceKind kind, mlir::Value x,
                    mlir::Value acc, bool isUnsigned);

/// Reduces `value` over sorted `axes`, keeping them as size 1 when
/// `keepdims`. Accumulates in the element type; Mean divides at the end.
/// Integer Max and Min compare signed, or unsigned with `isUnsigned`.
mlir::Value reduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                   llvm::ArrayRef<int64_t> axes, bool keepdims, ReduceKind kind,
                   bool isUnsigned = false);

} // namespace kiln

#endif // KILN_CODEGEN_KERNELS_BUILDERS_H
