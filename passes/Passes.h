// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.h - kiln's graph passes ---------------------------*- C++ -*-===//
//
// The target-independent passes on the kiln dialect: folding, fusions,
// layout and precision assignment. Code generation's shared passes are in
// codegen/common/.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
