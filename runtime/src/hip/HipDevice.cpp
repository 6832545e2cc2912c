#include "runtime/src/hip/HipDevice.h"

#include "runtime/src/Status.h"
#include "runtime/src/gpu/GpuDevice.h"
#include "runtime/src/hip/HipModel.h"

#include <cstdlib>

namespace kiln::hip {

kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out) {
  // "hip" or "hip:N".
  char *end = nullptr;
  long ordinal = name[3] ? strtol(name + 4, &end, 10) : 0;
  if (name[3] && (end == name + 4 || *end != '\0' || ordinal < 0 || ordinal > 1024))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "device '%s': expected hip:N, N the GPU's number from 0", name);
  const Loaded &loaded = loadDriver();
  if (!loaded.error.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "device 'hip:%d' is not available: %s", int(ordinal),
                      loaded.error.c_str());
  auto create = [&] { return std::make_unique<HipModel>(loaded, int(ordinal)); };
  gpu::GpuModel *state = nullptr;
  if (kiln_status_t status =
          gpu::openGpuModel(*model, "hip:" + std::to_string(ordinal), create, &state))
    return status;
  return gpu::openGpuDevice(*state, *model, options, out);
}

} // namespace kiln::hip
