// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ProductFusion.h - what a matrix-unit launch takes in -----*- C++ -*-===//
//
// Which linalg ops are products a GPU's matrix units can compute (NVIDIA's
// tensor cores, AMD's matrix cores: the loops of C += A * B by role), and
// which kernels around each its launch takes in: the writers of its
// operands, computed where their elements are staged, and the elementwise
// kernel after it, on the accumulators.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_GPU_PRODUCTFUSION_H
#define KILN_CODEGEN_GPU_PRODUCTFUSION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/MapVector.h"

#include <optional>

namespace kiln::products {

/// The loops of a product by role, outermost first. The batch and the
/// rows may be sizes given at run time (a symbolic batch or sequence):
/// their ranges and counts are then dynamic, and `sizeLoops` gives their
/// extents as values; the columns and the reduction (a weight's) are
/// static.
struct Product {
  mlir::linalg::GenericOp op;
  llvm::SmallVector<unsigned> batch, rows, cols;
  unsigned k;
  llvm::SmallVector<int64_t> ranges;
  int64_t numBatch = 1, numRows = 1, numCols = 1;
  /// Each loop's extent, and the counts of batch and rows, where the
  /// launch is (see `sizeLoops`).
  llvm::SmallVector<mlir::OpFoldResult> extents;
  mlir::OpFoldResult batchCount, rowCount;
  mlir::Value a, b, c;
  mlir::AffineMap mapA, mapB, mapC;
  float scaleA = 1.0f, scaleB = 1.0f; ///< an 8-bit product's (kiln.scales)
};

/// The product `op` computes, when it is one a kernel here can take.
std::optional<Product> matchProduct(mlir::linalg::GenericOp op);

/// Fills `product`'s extents and counts at `b`, from the sizes of the
/// buffers each loop runs along (static ones as attributes).
void sizeLoops(mlir::OpBuilder &b, mlir::Location loc, Product &product);

/// The kernels a product's launch takes in.
struct Fusion {
  /// Buffers the launch never reads: it computes each element where it
  /// needs it, with the fill, transpose or generic that wrote the buffer (by
  /// allocation). Writers of A and B (an im2col gather, a rounding, a
  /// transpose) and of C (its initial value), and the writers of what
  /// those read, when only their reader reads them.
  llvm::MapVector<mlir::Value, mlir::Operation *> writers;
  /// The elementwise kernel after the product that reads C (bias,
  /// activation, residual, rounding): applied to the accumulators, and
  /// its output stored instead of C.
  mlir::linalg::GenericOp epilogue;
  /// Where the launch goes: at the epilogue, where what it reads exists.
  mlir::Operation *anchor = nullptr;
};

/// The fusions of `product`'s launch: with its epilogue if the buffers
/// computed in the launch do not include what the epilogue writes, else
/// without it. The limit on recomputation counts blocks of 64x64 whatever
/// the tile: 32x32 tiles double the count, but they are for products small
/// enough that a kernel's launch costs more than computing an element
/// again.
Fusion fuse(const Product &product);

} // namespace kiln::products

#endif // KILN_CODEGEN_GPU_PRODUCTFUSION_H
