// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ContractionFusion.h - what joins a host product ----------*- C++ -*-===//
//
// Which linalg ops are contractions the host tiles for registers (the
// loops of C += A * B by role), and which kernels join each: the zero fill
// of C, the elementwise kernel after it, the generic that writes B.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOST_CONTRACTIONFUSION_H
#define KILN_CODEGEN_HOST_CONTRACTIONFUSION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace kiln::host {

using namespace mlir;

/// A per-task panel of B bigger than this is not worth a stack.
constexpr int64_t kMaxPanelBytes = 512 * 1024;

/// Which loop of a contraction plays which part.
struct Roles {
  unsigned m, n, k;
  SmallVector<unsigned> outer;
  /// When B is packed in panels (kiln-pack-weights), their columns: B is
  /// read as B[n floordiv panel, k, n mod panel]. Else 0.
  int64_t panel = 0;
  /// When A is packed in row groups (kiln-pack-weights), their rows: A is
  /// read as A[.., m floordiv rowGroup, k, m mod rowGroup]. Else 0.
  int64_t rowGroup = 0;
};

/// The kernels that join a product.
struct Fusion {
  /// A fill of C with zeros, erased: the accumulators start at zero.
  linalg::FillOp zeroFill;
  /// An elementwise generic reading C (inputs `epilogueInputs`: SiLU's
  /// x * sigmoid(x) reads it twice), computed on
  /// the accumulators. Its dimensions [0, split) are fixed along a row of C,
  /// [split, rank) run along the columns, in order.
  linalg::GenericOp epilogue;
  SmallVector<unsigned> epilogueInputs;
  int64_t split = 0;
  /// The generic that writes B, computed per task into a panel: for each
  /// dimension of B, the producer's dimensions it flattens.
  linalg::GenericOp producer;
  SmallVector<SmallVector<int64_t>> groups;
};

/// An im2col gather marked kIm2colShiftAttr whose panel rows a task reads
/// as rows of its input (Panels.cpp): producer dimensions [n, g, c, kh,
/// kw, oh, ow] over an input [N, C, H, W] of identity layout, B's rows (c,
/// kh, kw) and columns (oh, ow). A run may give N; H and W too at stride 1
/// (output rows as long as the input's).
struct Im2colWindow {
  Value input;
  int64_t channels, windowRows, windowColumns;
  int64_t top, left, stride;
};

/// The window of `producer`, whose dimensions B flattens as `groups`, when
/// its panel rows can be read as vectors of `width` lanes: at stride 1
/// with a mask per window offset (25 at most), at stride 2 with one per
/// window column when a vector holds few output rows (evenRowSegments).
std::optional<Im2colWindow> im2colWindow(linalg::GenericOp producer,
                                         ArrayRef<SmallVector<int64_t>> groups, int64_t width);

/// How many output rows of `outputWidth` columns a vector of `width`
/// lanes holds at most, its first lane at a multiple of `width`: one where
/// the rows are whole vectors, else one more for each row boundary its
/// lanes may cross.
int64_t evenRowSegments(int64_t outputWidth, int64_t width);

/// The roles of `op`'s loops, when it is a contraction the host tiles.
std::optional<Roles> contractionRoles(linalg::GenericOp op);

/// The zero fill of C that only the product reads, if there is one.
linalg::FillOp zeroFillOf(linalg::GenericOp op);

/// Fills in the epilogue of `op`: the next kernel, when it is elementwise,
/// reads C where it was written and nothing else sees C.
void findEpilogue(linalg::GenericOp op, const Roles &roles, Fusion &fusion);

/// Fills in the producer of B: a generic before the product that writes
/// all of B, which only the product reads, and whose inputs nothing
/// between the two writes. Where a run gives B's columns (the output
/// positions of a convolution over a run's image), only an im2col window
/// at stride 1 (im2colWindow).
void findProducer(linalg::GenericOp op, const Roles &roles, int64_t width, Fusion &fusion);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_CONTRACTIONFUSION_H
