// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ONNX models as kiln compile reads them: a file of bytes imported into the
// kiln dialect. A malformed or hostile model must end in diagnostics, never
// a crash, a hang, an allocation past libFuzzer's limit, or a module that
// fails verification.

#include "compiler/onnx/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // An anonymous file: a regular file no other run sees. External data
  // resolves against its folder, /proc/self/fd, which holds no data files.
  static int fd = memfd_create("kiln-fuzz-onnx", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size))
    abort();
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  // A fresh context each time: constants stay interned in a context for
  // its life, and would pile up over millions of runs.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module = kiln::importOnnxFile(context, path, {});
  if (module && failed(mlir::verify(*module)))
    abort();
  return 0;
}
