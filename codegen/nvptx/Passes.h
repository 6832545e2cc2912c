// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Passes.h - the NVIDIA target's passes -------------------*- C++ -*-===//

#ifndef KILN_CODEGEN_NVPTX_PASSES_H
#define KILN_CODEGEN_NVPTX_PASSES_H

#include "codegen/common/Passes.h"

namespace kiln {

#define GEN_PASS_DECL
#include "codegen/nvptx/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/nvptx/Passes.h.inc"

} // namespace kiln

#endif // KILN_CODEGEN_NVPTX_PASSES_H
