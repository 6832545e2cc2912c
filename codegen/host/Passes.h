// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.h - the host target's passes ---------------------*- C++ -*-===//

#ifndef KILN_CODEGEN_HOST_PASSES_H
#define KILN_CODEGEN_HOST_PASSES_H

#include "codegen/common/Passes.h"

namespace kiln {

/// On the dispatch declarations kiln-outline-parallel makes: the task
/// function and the number of tasks.
constexpr llvm::StringLiteral kTaskAttr = "kiln.task";
constexpr llvm::StringLiteral kTaskCountAttr = "kiln.task_count";
/// On a function declaration that the host code generator defines, and
/// that kiln-outline-parallel gives the runtime's context as a first
/// argument.
constexpr llvm::StringLiteral kRuntimeHookAttr = "kiln.runtime_hook";
/// The hook called after each kernel (see kiln-mark-kernel-ends).
constexpr llvm::StringLiteral kKernelEndHook = "kiln_kernel_end";

#define GEN_PASS_DECL
#include "codegen/host/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/host/Passes.h.inc"

} // namespace kiln

#endif // KILN_CODEGEN_HOST_PASSES_H
