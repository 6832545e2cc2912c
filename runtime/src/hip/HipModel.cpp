// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/hip/HipModel.h"

#include "runtime/src/Status.h"

#include <cstring>
#include <memory>

namespace kiln::hip {

namespace {

/// The thread's current device before `HipModel::enter`.
thread_local int previousDevice = 0;

/// The code object for a GPU whose architecture is `arch` ("gfx942", the
/// part of the runtime's gcnArchName before its features): the one built
/// for exactly that chip, since AMD's instruction sets differ from chip to
/// chip.
const CodeSection *chooseCode(const kiln_model_t &model, const std::string &arch) {
  for (const CodeSection &code : model.code)
    if (code.kind == artifact::CodeKind::HSACO && code.target == arch)
      return &code;
  return nullptr;
}

} // namespace

std::string HipModel::describeError(int status) const {
  const char *name = d.getErrorName(status), *text = d.getErrorString(status);
  std::string described = name ? name : "HIP error " + std::to_string(status);
  // Some HIP runtimes describe an error by its name alone.
  if (text && described != text)
    described += std::string(": ") + text;
  return described;
}

bool HipModel::enter() {
  return d.getDevice(&previousDevice) == hipSuccess && d.setDevice(ordinal) == hipSuccess;
}

void HipModel::leave() { d.setDevice(previousDevice); }

int HipModel::moduleGetGlobal(gpu::DevicePtr *address, size_t *bytes, const char *symbol) {
  void *found = nullptr;
  int status = d.moduleGetGlobal(&found, bytes, static_cast<hipModule_t>(module), symbol);
  *address = reinterpret_cast<gpu::DevicePtr>(found);
  return status;
}

int HipModel::malloc(gpu::DevicePtr *address, size_t bytes) {
  void *memory = nullptr;
  int status = d.malloc(&memory, bytes);
  *address = reinterpret_cast<gpu::DevicePtr>(memory);
  return status;
}

kiln_status_t HipModel::tensorMapsUnavailable() const {
  return makeStatus(KILN_STATUS_DATA_LOSS,
                    "corrupt artifact: the plan for %s has TMA tensor maps, which only NVIDIA "
                    "GPUs have",
                    target.c_str());
}

int HipModel::encodeTensorMap(void *, const LaunchArg &, gpu::DevicePtr) {
  return hipErrorInvalidDevice;
}

kiln_status_t HipModel::load(const kiln_model_t &model) {
  int count = 0;
  int counted = d.getDeviceCount(&count);
  if (loaded.initStatus != hipSuccess || counted == hipErrorNoDevice || count == 0)
    return makeStatus(
        KILN_STATUS_UNAVAILABLE,
        "device 'hip:%d' is not available: this machine has no AMD GPU (%s found "
        "none: %s)",
        ordinal, loaded.library.c_str(),
        describeError(loaded.initStatus ? loaded.initStatus : hipErrorNoDevice).c_str());
  if (counted)
    return gpu::failure(*this, counted, "cannot count the GPUs");
  if (ordinal >= count)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "device 'hip:%d' is not available: this machine has %d AMD GPU%s", ordinal,
                      count, count == 1 ? "" : "s");
  auto properties = std::make_unique<DeviceProperties>();
  if (int status = d.getDeviceProperties(properties.get(), ordinal))
    return gpu::failure(*this, status, "cannot read the GPU's properties");
  std::string gpuName(properties->name, strnlen(properties->name, sizeof(properties->name)));
  std::string arch(properties->gcnArchName,
                   strnlen(properties->gcnArchName, sizeof(properties->gcnArchName)));
  arch = arch.substr(0, arch.find(':'));
  if (arch.rfind("gfx", 0) != 0)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "hip:%d (%s): the HIP runtime does not name the GPU's architecture (it says "
                      "'%s')",
                      ordinal, gpuName.c_str(), arch.c_str());
  const CodeSection *code = chooseCode(model, arch);
  if (!code)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "hip:%d (%s) is %s, and the artifact has no code for it (it holds code for "
                      "%s); compile with --target %s",
                      ordinal, gpuName.c_str(), arch.c_str(), codeTargets(model).c_str(),
                      arch.c_str());
  plan = &model.plans[code->plan];
  target = code->target;
  description = name + " (" + gpuName + ", " + arch + ", code object for " + target + ")";

  gpu::Current current(*this);
  if (!current.ok())
    return makeStatus(KILN_STATUS_INTERNAL, "hip:%d: cannot make it the current device", ordinal);
  if (int status = d.moduleLoadData(reinterpret_cast<hipModule_t *>(&module), code->data)) {
    module = nullptr;
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "hip:%d: the HIP runtime cannot load the code object for %s: %s", ordinal,
                      target.c_str(), describeError(status).c_str());
  }
  return finishLoading(model, *code);
}

} // namespace kiln::hip
