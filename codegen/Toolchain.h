// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Toolchain.h - what kiln asks of LLVM's back ends and lld -*- C++ -*-===//

#ifndef KILN_CODEGEN_TOOLCHAIN_H
#define KILN_CODEGEN_TOOLCHAIN_H

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace kiln {

/// Whether LLVM's back end for `triple` knows the processor `chip`. The
/// target's MC layer must have been initialized.
bool isKnownChip(llvm::StringRef triple, llvm::StringRef chip);

/// Links relocatable objects into a shared object with ld.lld (LLVM's own
/// first, then the one on PATH), passing `flags` before the inputs.
llvm::FailureOr<std::string>
linkSharedObject(llvm::ArrayRef<std::string> objects, llvm::ArrayRef<llvm::StringRef> flags,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace kiln

#endif // KILN_CODEGEN_TOOLCHAIN_H
