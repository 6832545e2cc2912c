// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Buffers.h - buffers and the kernels that touch them ---*- C++ -*-===//
//
// Before kiln-plan-memory each buffer of @main is a memref.alloc (or an
// argument), seen through views. The kernel-forming passes ask who reads
// and writes a buffer, and rewrite kernels into one another with these.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_COMMON_BUFFERS_H
#define KILN_CODEGEN_COMMON_BUFFERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {

/// memref.expand_shape or memref.collapse_shape.
bool isReshape(mlir::Operation *op);

/// The allocation `value` is, through reshapes only (so it sees every
/// element, in row-major order), or null.
mlir::memref::AllocOp reshapedAlloc(mlir::Value value);

/// The buffer `value` views.
mlir::Value rootOf(mlir::Value value);

/// The ops of `root`'s block that use it or a view of it (or hold an op
/// that does, as a generic holds the loads of its body), views aside.
llvm::SmallVector<mlir::Operation *> accessesOf(mlir::Value root);

/// Ops that neither read nor write buffers: views, constants, allocations.
bool isInert(mlir::Operation *op);

/// The body `out + in0 * in1` (either order of the addition).
bool isMultiplyAdd(mlir::linalg::GenericOp op);

/// Maps whose results are loop indices or constants.
bool onlyDimsAndConstants(mlir::AffineMap map);

/// A generic on buffers with one output and parallel loops only.
bool isAllParallel(mlir::linalg::GenericOp op);

/// Erases the buffer `root` and its views once nothing else uses them.
void eraseIfDead(mlir::Value root);

/// Whether `type`'s innermost dimension has unit stride.
bool hasUnitInnermostStride(mlir::MemRefType type);

/// The indices of element `flat` (in range) of a row-major shape of
/// `extents`: the innermost varies fastest, unit extents are 0. `flat` may
/// be a vector of indices: then each index is, lane by lane, too.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                                           llvm::ArrayRef<int64_t> extents);

/// The same with extents that may be given at run time (`flat` a scalar
/// where one is).
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                                           llvm::ArrayRef<mlir::OpFoldResult> extents);

/// The product of `factors`, built at `b`: an attribute when all are
/// static, else the run-time ones multiplied, times the static ones' product
/// (one constant).
mlir::OpFoldResult multiplied(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<mlir::OpFoldResult> factors);

/// The size of dimension `dim` of `buffer`: its static size, or the value
/// it was allocated or viewed with (through reshapes, casts and subviews),
/// built at `b`. Only where nothing says it is the size a memref.dim of the
/// buffer, so that a buffer a kernel stops reading can still be erased.
mlir::OpFoldResult bufferSize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                              int64_t dim);

/// The indices `map` (of loop indices and constants) reads at `loops`.
llvm::SmallVector<mlir::Value> indicesAt(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::AffineMap map, mlir::ValueRange loops);

/// Index arithmetic at one place of a kernel being built: the passes that
/// write launches derive their builders from it.
struct IndexArithmetic {
  IndexArithmetic(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::Value constant(int64_t value) {
    return mlir::arith::ConstantIndexOp::create(b, loc, value);
  }
  mlir::Value add(mlir::Value l, mlir::Value r) {
    return mlir::arith::AddIOp::create(b, loc, l, r);
  }
  mlir::Value mul(mlir::Value l, int64_t r) {
    return mlir::arith::MulIOp::create(b, loc, l, constant(r));
  }
  mlir::Value div(mlir::Value l, int64_t r) {
    return mlir::arith::DivUIOp::create(b, loc, l, constant(r));
  }
  mlir::Value rem(mlir::Value l, int64_t r) {
    return mlir::arith::RemUIOp::create(b, loc, l, constant(r));
  }
  mlir::Value lessThan(mlir::Value l, int64_t r) { return lessThan(l, constant(r)); }
  mlir::Value lessThan(mlir::Value l, mlir::Value r) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult, l, r);
  }
  /// A size, static or not, as an index.
  mlir::Value value(mlir::OpFoldResult size) {
    return mlir::getValueOrCreateConstantIndexOp(b, loc, size);
  }
  mlir::Value both(mlir::Value l, mlir::Value r) {
    return mlir::arith::AndIOp::create(b, loc, l, r);
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace kiln

#endif // KILN_CODEGEN_COMMON_BUFFERS_H
