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

/// Whether `op`'s body can run on vectors: elementwise arith and math on
/// f32 (and i1, i32) only, reading neither indices nor its output.
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

/// The indices an operand is read at through `map` (of dimensions and
/// constants only) when loop dimension i is at `at[i]`.
SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map, ArrayRef<Value> at);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_VECTORBODY_H
