#include "runtime/src/cuda/CudaDevice.h"

#include "runtime/src/Status.h"
#include "runtime/src/cuda/CudaModel.h"
#include "runtime/src/gpu/GpuDevice.h"

#include <cstdlib>

namespace kiln::cuda {

kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out) {
  // "cuda" or "cuda:N".
  char *end = nullptr;
  long ordinal = name[4] ? strtol(name + 5, &end, 10) : 0;
  if (name[4] && (end == name + 5 || *end != '\0' || ordinal < 0 || ordinal > 1024))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "device '%s': expected cuda:N, N the GPU's number from 0", name);
  const Loaded &loaded = loadDriver();
  if (!loaded.error.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "device 'cuda:%d' is not available: %s",
                      int(ordinal), loaded.error.c_str());
  auto create = [&] { return std::make_unique<CudaModel>(loaded.driver, int(ordinal)); };
  gpu::GpuModel *state = nullptr;
  if (kiln_status_t status =
          gpu::openGpuModel(*model, "cuda:" + std::to_string(ordinal), create, &state))
    return status;
  return gpu::openGpuDevice(*state, *model, options, out);
}

} // namespace kiln::cuda
