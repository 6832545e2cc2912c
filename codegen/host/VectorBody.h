// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- VectorBody.h - a linalg body computed on vectors ---------*- C++ -*-===//
//
// An elementwise linalg body (arith and math on scalars) computes the same
// on vectors, lane by lane: the register tiles apply a product's epilogue
// so, and kiln-vectorize-elementwise whole kernels, which walk their
// outputs a vector at a time as kiln-vectorize-windows does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOST_VECTORBODY_H
#define KILN_CODEGEN_HOST_VECTORBODY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::host {

using namespace mlir;

/// The f32 lanes of the `bits`-wide vector registers a host pass's
/// vector-bits option names; an error on `op` naming `pass` unless `bits`
/// is 128, 256 or 512.
FailureOr<int64_t> vectorLanes(Operation *op, StringRef pass, int64_t bits);

/// Whether `op` computes the same on vectors, lane by lane: a constant, or
/// an elementwise arith or math op without memory effects, on f32, i1 and
/// i32 only.
bool isVectorizableOp(Operation &op);

/// Whether `op`'s body can run on vectors: vectorizable ops only, reading
/// neither indices nor its output.
bool isVectorizableBody(linalg::GenericOp op);

/// Whether each of `op`'s operands is an f32 buffer read or written
/// through dimensions and constants, its output along the innermost loop
/// and each input along it or not at all, with unit stride when along it:
/// a kernel whose innermost loop can run on vector lanes.
bool hasLaneOperands(linalg::GenericOp op);

/// Clones `ops` (elementwise arith and math on scalars, in order) at `b`'s
/// insertion point on vectors of `width` lanes: `mapping` gives the vectors
/// of the values the caller computed (an op whose result it holds is not
/// cloned), constants become splats, and any other value from outside
/// `ops` is broadcast to every lane.
void cloneOnVectors(OpBuilder &b, Location loc, ArrayRef<Operation *> ops, IRMapping &mapping,
                    int64_t width);

/// cloneOnVectors of `body`'s ops but its terminator, `mapping` holding
/// each block argument's vector; the vectors the body yields.
SmallVector<Value> cloneBodyOnVectors(OpBuilder &b, Location loc, Block &body, IRMapping &mapping,
                                      int64_t width);

/// At `b`'s insertion point, loops over `ranges` (static sizes, or sizes a
/// run gives) but the innermost (a range of 1 is no loop), around a loop of
/// whole `width`-lane vectors along the innermost and one masked vector for
/// the rest. `body` gets, with `b` inside the loops, each loop's index (the
/// innermost's: its first lane's), the mask of the lanes in the range (null
/// for a whole vector) and how many lanes that is (ShapedType::kDynamic for
/// the rest of a run's extent, which may be none).
void forEachVector(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> ranges, int64_t width,
                   function_ref<void(ArrayRef<Value> at, Value mask, int64_t lanes)> body);

/// A vector of `type` with `value` in every lane.
Value splat(OpBuilder &b, Location loc, VectorType type, Attribute value);

/// The vector of `type` at `indices` of `memref`; with `mask`, only its
/// lanes are read and the others are zero.
Value loadLanes(OpBuilder &b, Location loc, VectorType type, Value memref, ValueRange indices,
                Value mask);

/// The lanes of `type` of `memref` (identity layout) at `indices`, one
/// vector of 32-bit lane indices per dimension, gathered from the buffer
/// seen as one dimension for the lanes of `mask`, zero in the others. The
/// offsets into it are 32-bit where its static shape holds fewer than 2^31
/// elements, 64-bit otherwise.
Value gatherLanes(OpBuilder &b, Location loc, VectorType type, Value memref,
                  ArrayRef<Value> indices, Value mask);

/// Stores `value` at `indices` of `memref`; with `mask`, only its lanes.
void storeLanes(OpBuilder &b, Location loc, Value value, Value memref, ValueRange indices,
                Value mask);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_VECTORBODY_H
