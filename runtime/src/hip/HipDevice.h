// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The HIP device: kiln's AMD GPU plans run through the HIP runtime, which
// is opened with dlopen on first use, so the runtime needs no ROCm to
// build or load.

#ifndef KILN_RUNTIME_HIP_HIPDEVICE_H
#define KILN_RUNTIME_HIP_HIPDEVICE_H

#include "runtime/src/Device.h"

namespace kiln::hip {

/// An HSA code object for an AMD chip (gfx90a, gfx942, ...).
bool runsCode(artifact::CodeKind kind, std::string_view target);

/// Opens `model` on `name`, "hip" or "hip:N": loads the model's code object
/// for the GPU's architecture and uploads the weights (once per model and
/// GPU, HipModel.h), then opens a session there (gpu/GpuDevice.h), whose
/// graph is a HIP graph. `model` must outlive the device.
kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out);

} // namespace kiln::hip

#endif // KILN_RUNTIME_HIP_HIPDEVICE_H
