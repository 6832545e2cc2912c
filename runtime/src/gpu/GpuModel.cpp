// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/gpu/GpuModel.h"

#include "runtime/format/PlanRecord.h"
#include "runtime/format/format.h"
#include "runtime/src/Status.h"

#include <cstring>

namespace kiln::gpu {

kiln_status_t failure(const GpuModel &gpu, int status, const std::string &what) {
  return makeStatus(gpu.outOfMemory(status) ? KILN_STATUS_RESOURCE_EXHAUSTED : KILN_STATUS_INTERNAL,
                    "%s: %s: %s", gpu.name.c_str(), what.c_str(),
                    gpu.describeError(status).c_str());
}

kiln_status_t openGpuModel(kiln_model_t &model, const std::string &name,
                           const std::function<std::unique_ptr<GpuModel>()> &create,
                           GpuModel **out) {
  auto make = [&](std::unique_ptr<DeviceModel> &made) -> kiln_status_t {
    std::unique_ptr<GpuModel> state = create();
    state->name = name;
    if (kiln_status_t status = state->load(model))
      return status;
    made = std::move(state);
    return nullptr;
  };
  DeviceModel *state = nullptr;
  kiln_status_t status = deviceModel(model, name, make, &state);
  *out = static_cast<GpuModel *>(state);
  return status;
}

kiln_status_t GpuModel::finishLoading(const kiln_model_t &model, const CodeSection &code) {
  // The record the loaded code holds (a global of the module) must be the
  // manifest's: the launches, their arguments and the buffers' sizes are
  // what the code was compiled for.
  DevicePtr address = 0;
  size_t bytes = 0;
  if (int status = moduleGetGlobal(&address, &bytes, KILN_PLAN_RECORD_SYMBOL))
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the %s code has no %s: %s",
                      code.target.c_str(), KILN_PLAN_RECORD_SYMBOL, describeError(status).c_str());
  std::string compiled(bytes, '\0');
  if (int status = copyToHost(compiled.data(), address, bytes))
    return failure(*this, status, "cannot read the code's plan record");
  // The global holds the text and its NUL.
  compiled.resize(strnlen(compiled.data(), compiled.size()));
  std::string mismatch = format::recordMismatch(manifestRecord(model, code), compiled);
  if (!mismatch.empty())
    return makeStatus(KILN_STATUS_DATA_LOSS,
                      "corrupt artifact: the %s code does not match the manifest: %s",
                      code.target.c_str(), mismatch.c_str());

  for (const Launch &launch : plan->launches) {
    Handle function = nullptr;
    if (int status = moduleGetFunction(&function, launch.kernel.c_str()))
      return makeStatus(KILN_STATUS_DATA_LOSS, "%s: the code has no kernel '%s': %s", name.c_str(),
                        launch.kernel.c_str(), describeError(status).c_str());
    if (int status = prepareFunction(function, launch))
      return failure(*this, status, "the GPU cannot give a kernel its shared memory");
    functions.push_back(function);
  }
  if (plan->weightsSize) {
    if (int status = malloc(&weights, plan->weightsSize)) {
      weights = 0;
      return failure(*this, status, "cannot allocate device memory for the weights");
    }
    if (int status = copyToDevice(weights, plan->weights, plan->weightsSize))
      return failure(*this, status, "cannot upload the weights");
  }
  return nullptr;
}

void GpuModel::release() {
  if (!weights && !module)
    return;
  Current current(*this);
  if (weights)
    free(weights);
  if (module)
    moduleUnload(module);
  weights = 0;
  module = nullptr;
}

} // namespace kiln::gpu
