// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/Status.h"

#include <cstdarg>
#include <cstdio>
#include <new>

namespace {
kiln_status_s outOfMemoryStatus{KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory"};
} // namespace

kiln_status_t kiln::outOfMemory() { return &outOfMemoryStatus; }

kiln_status_t kiln::makeStatus(kiln_status_code_t code, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  auto *status = new (std::nothrow) kiln_status_s{code, buffer};
  return status ? status : outOfMemory();
}
