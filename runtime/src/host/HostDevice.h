// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host device: runs the model's host code on this CPU, on a pool of
// threads of the session's own.

#ifndef KILN_RUNTIME_HOST_HOSTDEVICE_H
#define KILN_RUNTIME_HOST_HOSTDEVICE_H

#include "runtime/src/Device.h"

namespace kiln::host {

/// Host code: an x86-64 shared object for a micro-architecture level
/// (x86-64, x86-64-v2 ... x86-64-v4).
bool runsCode(artifact::CodeKind kind, std::string_view target);

/// Opens `model` on the host: allocates the session's activation arena and
/// starts its threads. A run ends before `enqueue` returns. `model` must
/// outlive the device. Errors: UNAVAILABLE (no host code this CPU can run),
/// RESOURCE_EXHAUSTED.
kiln_status_t openDevice(kiln_model_t *model, const DeviceOptions &options,
                         std::unique_ptr<Device> &out);

} // namespace kiln::host

#endif // KILN_RUNTIME_HOST_HOSTDEVICE_H
