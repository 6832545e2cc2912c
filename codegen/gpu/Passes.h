// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.h - GPU kernel formation's passes ----------------*- C++ -*-===//

#ifndef KILN_CODEGEN_GPU_PASSES_H
#define KILN_CODEGEN_GPU_PASSES_H

#include "codegen/common/Passes.h"

namespace kiln {

#define GEN_PASS_DECL
#include "codegen/gpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/gpu/Passes.h.inc"

} // namespace kiln

#endif // KILN_CODEGEN_GPU_PASSES_H
