// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ProductKernel.h - what every matrix-unit kernel builder does -*- C++ -*-===//
//
// The part of a product's launch body that is the same on every GPU: where
// a thread's rows and columns lie (clamped, with whether they are inside),
// the indices each operand is read at, reading an element (loaded, or
// computed as the fused writer of its buffer computes it), and C's initial
// value and its store (through the fused epilogue). The vendors' builders
// (codegen/nvptx/TensorCoreKernel.h, codegen/amdgpu/MatrixCoreKernel.h)
// add their staging and their matrix instructions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_GPU_PRODUCTKERNEL_H
#define KILN_CODEGEN_GPU_PRODUCTKERNEL_H

#include "codegen/common/Buffers.h"
#include "codegen/gpu/ProductFusion.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln::products {

using namespace mlir;

/// Each index of `view` (an allocation seen through reshapes) at `indices`
/// as the allocation's, or the other way round (`fromAlloc`).
class Reshapes {
public:
  Reshapes(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  SmallVector<Value> toAlloc(Value view, ValueRange indices) {
    SmallVector<Value> at(indices);
    while (Operation *reshape = view.getDefiningOp()) {
      if (!isReshape(reshape))
        break;
      at = step(reshape, at, /*towardsSource=*/true);
      view = reshape->getOperand(0);
    }
    return at;
  }

  SmallVector<Value> fromAlloc(Value view, ValueRange indices) {
    SmallVector<Operation *> chain;
    for (Value at = view; Operation *reshape = at.getDefiningOp(); at = reshape->getOperand(0)) {
      if (!isReshape(reshape))
        break;
      chain.push_back(reshape);
    }
    SmallVector<Value> at(indices);
    for (Operation *reshape : llvm::reverse(chain))
      at = step(reshape, at, /*towardsSource=*/false);
    return at;
  }

private:
  /// Through one reshape: its groups of the expanded side's dimensions
  /// flatten into one index of the collapsed side.
  SmallVector<Value> step(Operation *reshape, ArrayRef<Value> at, bool towardsSource) {
    bool collapse = isa<memref::CollapseShapeOp>(reshape);
    SmallVector<ReassociationIndices> groups =
        collapse ? cast<memref::CollapseShapeOp>(reshape).getReassociationIndices()
                 : cast<memref::ExpandShapeOp>(reshape).getReassociationIndices();
    // Towards the source of a collapse, or away from that of an expand,
    // the indices split; otherwise they join.
    bool split = towardsSource == collapse;
    Value expanded = collapse ? reshape->getOperand(0) : reshape->getResult(0);
    SmallVector<Value> result;
    for (auto [g, group] : llvm::enumerate(groups)) {
      SmallVector<OpFoldResult> extents;
      for (int64_t dim : group)
        extents.push_back(bufferSize(b, loc, expanded, dim));
      if (split) {
        llvm::append_range(result, delinearize(b, loc, at[g], extents));
      } else {
        Value flat = constant(0);
        for (auto [dim, extent] : llvm::zip(group, extents)) {
          flat =
              arith::MulIOp::create(b, loc, flat, getValueOrCreateConstantIndexOp(b, loc, extent));
          flat = arith::AddIOp::create(b, loc, flat, at[dim]);
        }
        result.push_back(flat);
      }
    }
    return result;
  }

  Value constant(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  OpBuilder &b;
  Location loc;
};

/// The side of the square tile of C a block computes: `large`, unless a
/// product would launch fewer than `fewBlocks` blocks of it (about the
/// GPU's multiprocessors), then `small`, so that each gets a block before
/// any gets two. Rows or a batch given at run time take `large`.
int64_t productTile(const Product &product, int64_t large, int64_t small, int64_t fewBlocks);

/// Where a product's launch is, in the source: every op it takes in.
Location fusedLocation(const Product &product, const Fusion &fusion);

/// The launch of a product's kernel, at `b` (the fusion's anchor, where
/// `sizeLoops` gave the product's counts): blocks of `tile` x `tile`
/// outputs (rows on x, which allows the most blocks, then columns, then
/// the batch) of `threads` threads, with `kiln.kernel = "matmul"`, the
/// product's flops, and its precision and layout.
gpu::LaunchOp createProductLaunch(OpBuilder &b, Location loc, const Product &product, int64_t tile,
                                  int64_t threads);

/// Erases what a launch replaces: the product, its epilogue, the writers
/// it takes in, and the buffers nothing reads any more.
void eraseFused(const Product &product, const Fusion &fusion);

/// The launch body's shared part; `b` is inside the launch.
class ProductKernelBuilder : protected IndexArithmetic {
protected:
  ProductKernelBuilder(OpBuilder &b, Location loc, const Product &product, const Fusion &fusion)
      : IndexArithmetic(b, loc), p(product), fusion(fusion), reshapes(b, loc) {}

  /// A flattened index along some loops: each loop's index (clamped to the
  /// last, so every load is in bounds) and whether it is inside.
  struct Position {
    SmallVector<std::pair<unsigned, Value>> dims;
    Value valid;
  };

  /// `value` times `scale` (fp8's), or `value` when it is 1.
  Value scaled(Value value, float scale);

  /// Splits `flat` (in [0, total)) into the indices of `loops`, innermost
  /// fastest.
  SmallVector<std::pair<unsigned, Value>> decompose(Value flat, ArrayRef<unsigned> loops);

  /// Clamped to `total - back`: the last element, or with `back` the
  /// length of an aligned run, the start of the last run.
  Position position(Value flat, ArrayRef<unsigned> loops, OpFoldResult total, int64_t back = 1);

  /// The indices `map` reads at these loop indices (0 for every other loop).
  SmallVector<Value> indicesOf(AffineMap map, ArrayRef<std::pair<unsigned, Value>> known);

  /// C's indices at a row and a column of the block's batch.
  SmallVector<Value> indicesOfC(const Position &row, const Position &col);

  /// C's initial element (at clamped indices outside it: never stored).
  Value loadC(const Position &row, const Position &col);

  /// Stores C's element, or the epilogue's on it, within bounds.
  void storeC(const Position &row, const Position &col, Value value);

  /// The element of `buffer` at `indices`: loaded, or computed as its
  /// fused writer computes it.
  Value read(Value buffer, ValueRange indices);

  /// What `op`'s body yields at loop indices `loops`, its inputs read there
  /// but for those `known` gives.
  Value compute(linalg::GenericOp op, ValueRange loops,
                const llvm::DenseMap<unsigned, Value> &known);

  const Product &p;
  const Fusion &fusion;
  Reshapes reshapes;
  /// The block's batch indices.
  SmallVector<std::pair<unsigned, Value>> batchIndex;
};

} // namespace kiln::products

#endif // KILN_CODEGEN_GPU_PRODUCTKERNEL_H
