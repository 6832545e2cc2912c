// Calling the CUDA driver: its errors as kiln statuses, and a context made
// current for a scope.

#ifndef KILN_RUNTIME_CUDA_DRIVERUTIL_H
#define KILN_RUNTIME_CUDA_DRIVERUTIL_H

#include "kiln/runtime.h"
#include "runtime/src/cuda/DynamicSymbols.h"

#include <string>

namespace kiln::cuda {

/// The driver's name and description of `status`.
std::string describeError(const Driver &d, CUresult status);

/// A status for a failed driver call, "cuda:N: what: the driver's error";
/// out of memory is RESOURCE_EXHAUSTED.
kiln_status_t failure(const Driver &d, CUresult status, int ordinal, const std::string &what);

/// Makes a context current for a scope.
class Current {
public:
  Current(const Driver &d, CUcontext context) : d(d) {
    pushed = d.ctxPushCurrent(context) == CUDA_SUCCESS;
  }
  ~Current() {
    CUcontext popped;
    if (pushed)
      d.ctxPopCurrent(&popped);
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;
  bool ok() const { return pushed; }

private:
  const Driver &d;
  bool pushed;
};

} // namespace kiln::cuda

#endif // KILN_RUNTIME_CUDA_DRIVERUTIL_H
