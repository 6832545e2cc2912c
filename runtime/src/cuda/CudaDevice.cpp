// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/cuda/CudaDevice.h"

#include "runtime/src/cuda/CudaModel.h"
#include "runtime/src/gpu/GpuDevice.h"

namespace kiln::cuda {

bool runsCode(artifact::CodeKind kind, std::string_view target) {
  return (kind == artifact::CodeKind::PTX || kind == artifact::CodeKind::Cubin) &&
         target.substr(0, 3) == "sm_";
}

kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out) {
  auto driverError = [] { return loadDriver().error; };
  auto create = [](int ordinal) {
    return std::make_unique<CudaModel>(loadDriver().driver, ordinal);
  };
  return gpu::openNamedGpu(model, name, "cuda", driverError, create, options, out);
}

} // namespace kiln::cuda
