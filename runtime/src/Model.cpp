#include "runtime/src/Model.h"

#include <algorithm>
#include <cstdlib>
#include <sys/mman.h>

kiln::Storage::~Storage() {
  if (mapped)
    munmap(data, size);
  else
    free(data);
}

std::string kiln::codeTargets(const kiln_model_t &model) {
  std::vector<std::string> targets;
  for (const CodeObject &code : model.code)
    if (std::find(targets.begin(), targets.end(), code.target) == targets.end())
      targets.push_back(code.target);
  std::string list;
  for (const std::string &target : targets)
    list += (list.empty() ? "" : ", ") + target;
  return list;
}

kiln_status_t kiln::deviceModel(kiln_model_t &model, const std::string &device,
                                const MakeDeviceModel &make, DeviceModel **out) {
  std::lock_guard<std::mutex> lock(model.devicesMutex);
  for (auto &[name, state] : model.devices)
    if (name == device) {
      *out = state.get();
      return nullptr;
    }
  *out = nullptr;
  if (!make)
    return nullptr;
  std::unique_ptr<DeviceModel> state;
  if (kiln_status_t status = make(state))
    return status;
  *out = state.get();
  model.devices.emplace_back(device, std::move(state));
  return nullptr;
}
