// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- LaneEmitter.h - a generic's body on vector lanes ---------*- C++ -*-===//
//
// A linalg.generic's body, reads and loops included, computed for a vector
// of lanes along its innermost loop: kiln-vectorize-windows runs window
// kernels (depthwise convolutions, pooling) so.
//
// An index that moves with the lane stays a scalar base and a constant
// stride (lane i's is `base + stride * i`), so a read along it is one
// vector load (at a stride of 2: two loads and a shuffle); a value that is
// the same in every lane (a weight, a row's bounds check) stays one scalar.
// A select whose condition differs by lane through integer compares, a
// bounds check where a window overhangs its input:
//
//   %p = ow * stride + kw - pad
//   %inside = %p >= 0 && %p < W
//   %x = memref.load %input[..., select(%inside, %p, 0)]
//   %v = select(%inside, %x, 0.0)
//
// is versioned: a compare on affine indices is monotonic in the lane, so
// when every one holds for the first and the last lane it holds for all,
// and the select is computed with them true (a plain vector load); at the
// edges the lanes where the condition holds read with a masked load at the
// same place, or, failing that, every lane computes what the scalar code
// does, reads gathering.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOST_LANEEMITTER_H
#define KILN_CODEGEN_HOST_LANEEMITTER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kiln::host {

using namespace mlir;

/// Which values of a generic's body differ from lane to lane (lanes run
/// along its innermost loop), each loop's carried values counted as
/// differing.
class LaneDependence {
public:
  explicit LaneDependence(linalg::GenericOp op);

  bool operator()(Value value);

private:
  bool compute(Value value);

  linalg::GenericOp op;
  DenseMap<Value, bool> known;
};

/// Whether `op`'s body is made of what emitOnLanes handles, not reading
/// its output: its loop indices, loops with uniform bounds, loads from
/// buffers of f32 in identity layout (each dimension's index fits the
/// 32 bits of an index lane), and arith, math and affine ops on f32, i1,
/// i32 and indices (casts and affine ops only where uniform).
bool hasLaneBody(linalg::GenericOp op, LaneDependence &varies);

/// At `b`'s insertion point, the vector of `width` lanes that `op`'s body
/// (hasLaneBody) yields for its first `active` lanes (an index; the others
/// are undefined) from `at`, each loop's index (the innermost's: the first
/// lane's); `mask`, when set, holds the active lanes. The inputs are read
/// through their maps: a vector along the innermost loop (unit stride),
/// else a scalar. With `gathers`, sets it when a read gathered where no
/// bounds check versions it (reads that do not run along the lanes).
Value emitOnLanes(linalg::GenericOp op, int64_t width, OpBuilder &b, LaneDependence &varies,
                  ArrayRef<Value> at, Value mask, Value active, bool *gathers = nullptr);

/// Whether, at `width` lanes, every read of `op`'s body (hasLaneBody) runs
/// along its lanes away from the edges: a trial emission gathers nowhere
/// else.
bool readsAlongLanes(linalg::GenericOp op, int64_t width, LaneDependence &varies);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_LANEEMITTER_H
