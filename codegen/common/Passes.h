// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.h - code generation shared by targets -------------*- C++ -*-===//
//
// The buffer-level passes every target's pipeline is built from
// (bufferization, memory planning, the kernel list) and the attributes
// code generation records on kernels. The graph passes are in passes/.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_COMMON_PASSES_H
#define KILN_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Value.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// On the module, from kiln-list-kernels: the kernels of @main, in order.
constexpr llvm::StringLiteral kKernelsAttr = "kiln.kernels";
/// On an op that is one kernel with what it fused (a register-tiled product
/// on the host, a gpu.launch of a product or of row statistics on GPUs),
/// its kind for the kernel list.
constexpr llvm::StringLiteral kKernelAttr = "kiln.kernel";

/// On a fused product kernel: the floating-point operations it does, two
/// for each multiply-add of the product.
constexpr llvm::StringLiteral kFlopsAttr = "kiln.flops";

/// On the im2col gather of an NCHW convolution in two dimensions, of
/// dilation 1 and stride s the same along both: [top pad, left pad, s].
/// The columns' row of channel c and window offset (kh, kw) at output
/// (oh, ow) is then the input's channel c at (s oh + kh - top, s ow + kw -
/// left), zero where the window overhangs the input. At stride 1 (marked
/// only where the output rows are as long as the input's) that is each
/// output position moved by (kh - top) * width + kw - left; at stride 2,
/// every other element of an input row.
constexpr llvm::StringLiteral kIm2colShiftAttr = "kiln.im2col_shift";

/// On a kernel of @main before kiln-plan-memory: it reads only weights and
/// what such kernels wrote, so its results are the same whenever the
/// sizes are (kiln-keep-size-values). kiln-list-kernels lists it so.
constexpr llvm::StringLiteral kSizesOnlyAttr = "kiln.sizes_only";
/// The key of such a kernel's entry in the kernel list (true).
constexpr llvm::StringLiteral kSizesOnlyKey = "sizes_only";
/// On a buffer such kernels write and other kernels read: its values last
/// from one run to the next, so kiln-plan-memory gives it bytes of its own.
constexpr llvm::StringLiteral kKeptAttr = "kiln.kept";
/// On a symbol argument of @main: kept buffers hold values computed from
/// it, which a run of another value computes again.
constexpr llvm::StringLiteral kKeptSizesAttr = "kiln.kept_sizes";

/// Two for each multiply-add of contraction `op`, whose loop ranges are
/// static; 0 when one is dynamic.
int64_t contractionFlops(mlir::linalg::LinalgOp op);

/// The buffer that `op`, an op at the top of @main, stores its result in
/// when it is one of the kernels kiln-list-kernels lists; null otherwise.
mlir::Value kernelResult(mlir::Operation &op);

#define GEN_PASS_DECL
#include "codegen/common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/common/Passes.h.inc"

} // namespace kiln

#endif // KILN_CODEGEN_COMMON_PASSES_H
