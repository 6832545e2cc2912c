// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every device this runtime has, by the name a session asks for and by the
// code it runs: adding a driver means adding its folder and a line in each
// function here.

#include "runtime/src/Device.h"

#include "runtime/src/Status.h"
#include "runtime/src/cuda/CudaDevice.h"
#include "runtime/src/hip/HipDevice.h"
#include "runtime/src/host/HostDevice.h"

#include <cstring>

bool kiln::deviceRuns(artifact::CodeKind kind, std::string_view target) {
  return host::runsCode(kind, target) || cuda::runsCode(kind, target) ||
         hip::runsCode(kind, target);
}

kiln_status_t kiln::openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                               std::unique_ptr<Device> &out) {
  if (strcmp(name, "host") == 0)
    return host::openDevice(model, options, out);
  if (strncmp(name, "cuda", 4) == 0 && (name[4] == '\0' || name[4] == ':'))
    return cuda::openDevice(model, name, options, out);
  if (strncmp(name, "hip", 3) == 0 && (name[3] == '\0' || name[3] == ':'))
    return hip::openDevice(model, name, options, out);
  return makeStatus(KILN_STATUS_UNAVAILABLE,
                    "device '%s' is not available: this runtime runs models on 'host', 'cuda:N' "
                    "and 'hip:N'",
                    name);
}
