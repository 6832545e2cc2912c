//===- VectorBody.h - a linalg body computed on vectors ---------*- C++ -*-===//
//
// An elementwise linalg body (arith and math on scalars) computes the same
// on vectors, lane by lane: the register tiles apply a product's epilogue
// so, and kiln-vectorize-elementwise whole kernels.
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

/// A vector of `type` with `value` in every lane.
Value splat(OpBuilder &b, Location loc, VectorType type, Attribute value);

/// The vector of `type` at `indices` of `memref`; with `mask`, only its
/// lanes are read and the others are zero.
Value loadLanes(OpBuilder &b, Location loc, VectorType type, Value memref, ValueRange indices,
                Value mask);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_VECTORBODY_H
