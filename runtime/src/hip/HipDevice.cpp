// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/hip/HipDevice.h"

#include "runtime/src/gpu/GpuDevice.h"
#include "runtime/src/hip/HipModel.h"

namespace kiln::hip {

bool runsCode(artifact::CodeKind kind, std::string_view target) {
  return kind == artifact::CodeKind::HSACO && target.substr(0, 3) == "gfx";
}

kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out) {
  auto driverError = [] { return loadDriver().error; };
  auto create = [](int ordinal) { return std::make_unique<HipModel>(loadDriver(), ordinal); };
  return gpu::openNamedGpu(model, name, "hip", driverError, create, options, out);
}

} // namespace kiln::hip
