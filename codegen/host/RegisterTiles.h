// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- RegisterTiles.h - a host product as register tiles -------*- C++ -*-===//

#ifndef KILN_CODEGEN_HOST_REGISTERTILES_H
#define KILN_CODEGEN_HOST_REGISTERTILES_H

#include "codegen/host/ContractionFusion.h"

namespace kiln::host {

/// Emits the tiled loops of contraction `op` (`rows` rows by two vectors
/// of `width` columns a tile), with the kernels `fusion` joins to it, in
/// place of them all: at the epilogue if there is one (the buffers it
/// writes and reads exist there), else at the product. One task per (outer
/// index, block of rows, column tile): tasks write disjoint parts of C, so
/// they run as an scf.forall when `parallel`, else as a loop. Erases none
/// of the ops.
void emitRegisterTiles(linalg::GenericOp op, const Roles &roles, const Fusion &fusion,
                       int64_t width, int64_t rows, bool parallel);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_REGISTERTILES_H
