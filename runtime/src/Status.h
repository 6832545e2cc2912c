// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Statuses: what every fallible runtime call returns (NULL is success).

#ifndef KILN_RUNTIME_STATUS_H
#define KILN_RUNTIME_STATUS_H

#include "kiln/runtime.h"

#include <string>

struct kiln_status_s {
  kiln_status_code_t code;
  std::string message;
};

namespace kiln {

/// A status with a printf-style message; never NULL.
kiln_status_t makeStatus(kiln_status_code_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/// Stands in when there is no memory left for a status of its own: it is
/// shared, so it is never freed nor changed.
kiln_status_t outOfMemory();

} // namespace kiln

#endif // KILN_RUNTIME_STATUS_H
