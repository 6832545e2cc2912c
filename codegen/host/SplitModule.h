// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- SplitModule.h - a host module in parts, compiled apart ---*- C++ -*-===//
//
// LLVM optimizes and compiles a module on one thread. A host module holds
// hundreds of kernels that share nothing but @main, which calls them: split
// into parts, one LLVM context each, the parts compile side by side on the
// compiler's threads, and the linker joins their objects.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOST_SPLITMODULE_H
#define KILN_CODEGEN_HOST_SPLITMODULE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln {

/// Splits `module`, lowered to the LLVM dialect, into at most `parts`
/// modules of about the same size, `module` left as it is. Functions that
/// reference one another stay together, so LLVM sees each kernel with its
/// tasks as before; the first part holds @main, the entry point and the
/// hook @main calls after each kernel. A
/// function called from another part becomes external and hidden (the
/// shared object exports it to no one) and is declared there.
llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> splitHostModule(mlir::ModuleOp module,
                                                                     unsigned parts);

} // namespace kiln

#endif // KILN_CODEGEN_HOST_SPLITMODULE_H
