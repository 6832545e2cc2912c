//===- ProductFusion.h - what a tensor-core launch takes in -----*- C++ -*-===//
//
// Which linalg ops are products a tensor-core kernel can compute (the
// loops of C += A * B by role), and which kernels around each its launch
// takes in: the writers of its operands, computed where their elements are
// staged, and the elementwise kernel after it, on the accumulators.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_NVPTX_PRODUCTFUSION_H
#define KILN_CODEGEN_NVPTX_PRODUCTFUSION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/MapVector.h"

#include <optional>

namespace kiln::nvptx {

using namespace mlir;

/// The loops of a product by role, outermost first.
struct Product {
  linalg::GenericOp op;
  SmallVector<unsigned> batch, rows, cols;
  unsigned k;
  SmallVector<int64_t> ranges;
  int64_t numBatch = 1, numRows = 1, numCols = 1;
  Value a, b, c;
  AffineMap mapA, mapB, mapC;
  float scaleA = 1.0f, scaleB = 1.0f;
};

/// The product `op` computes, when it is one a kernel here can take.
std::optional<Product> matchProduct(linalg::GenericOp op);

/// The kernels a product's launch takes in.
struct Fusion {
  /// Buffers the launch never reads: it computes each element where it
  /// needs it, with the fill, transpose or generic that wrote the buffer (by
  /// allocation). Writers of A and B (an im2col gather, a rounding, a
  /// transpose) and of C (its initial value), and the writers of what
  /// those read, when only their reader reads them.
  llvm::MapVector<Value, Operation *> writers;
  /// The elementwise kernel after the product that reads C (bias,
  /// activation, residual, rounding): applied to the accumulators, and
  /// its output stored instead of C.
  linalg::GenericOp epilogue;
  /// Where the launch goes: at the epilogue, where what it reads exists.
  Operation *anchor = nullptr;
};

/// The fusions of `product`'s launch: with its epilogue if the buffers
/// computed in the launch do not include what the epilogue writes, else
/// without it. The limit on recomputation counts blocks of 64x64 whatever
/// the tile: 32x32 tiles double the count, but they are for products small
/// enough that a kernel's launch costs more than computing an element
/// again.
Fusion fuse(const Product &product);

} // namespace kiln::nvptx

#endif // KILN_CODEGEN_NVPTX_PRODUCTFUSION_H
