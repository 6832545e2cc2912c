// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Outlining.h - moving @main's kernels into functions ------*- C++ -*-===//
//
// kiln-outline-parallel makes tasks of @main's parallel loops, and
// kiln-outline-kernels functions of its other kernels: both move a region
// into a function that takes the buffers the region reads and writes, and
// the sizes and offsets a run computes from its symbols.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOST_OUTLINING_H
#define KILN_CODEGEN_HOST_OUTLINING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::host {

/// The values `region` uses that are defined outside it: above it, or in
/// another function when it is being moved there.
llvm::SetVector<mlir::Value> valuesFromOutside(mlir::Region &region);

/// Clones into `region` (starting its entry block) the constants it uses,
/// so that a function made of it sees them as constants rather than
/// arguments, and the views (slices, reshapes) it uses that a function
/// cannot take, so that it is passed the buffers they view. Views it can
/// take (an arena view, a contiguous slice or reshape) stay arguments:
/// the function then says nothing of where its buffers lie, and a layer
/// repeated elsewhere in the arena is the same function. For the same
/// reason a constant that the region uses only as byte offsets of arena
/// views (of sizes a run gives: those it takes) stays an argument.
void sinkConstantsAndViews(mlir::Region &region);

/// Whether `value` can be a function's argument as a buffer: one of
/// static shape and identity layout.
bool isPassableBuffer(mlir::Value value);

/// Whether `value` can be a function's argument: a passable buffer, or an
/// integer (a size or offset computed from the symbols).
bool isPassable(mlir::Value value);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_OUTLINING_H
