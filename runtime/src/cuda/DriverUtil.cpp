#include "runtime/src/cuda/DriverUtil.h"

#include "runtime/src/Status.h"

namespace kiln::cuda {

std::string describeError(const Driver &d, CUresult status) {
  const char *name = nullptr, *text = nullptr;
  d.getErrorName(status, &name);
  d.getErrorString(status, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(status)) + ": " +
         (text ? text : "no description");
}

kiln_status_t failure(const Driver &d, CUresult status, int ordinal, const std::string &what) {
  return makeStatus(status == CUDA_ERROR_OUT_OF_MEMORY ? KILN_STATUS_RESOURCE_EXHAUSTED
                                                       : KILN_STATUS_INTERNAL,
                    "cuda:%d: %s: %s", ordinal, what.c_str(), describeError(d, status).c_str());
}

} // namespace kiln::cuda
