// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A session on a GPU, whatever its vendor: the plan's kernels launched
// through the GpuModel interface, on a stream of its own.

#ifndef KILN_RUNTIME_GPU_GPUDEVICE_H
#define KILN_RUNTIME_GPU_GPUDEVICE_H

#include "runtime/src/Device.h"
#include "runtime/src/gpu/GpuModel.h"

namespace kiln::gpu {

/// Opens a session on the GPU `state` is loaded on: allocates the
/// session's memory in one piece (the arena, the inputs and outputs, and
/// any tensor maps) and, with `options.useGraph` and without
/// `options.profile`, captures the plan as a graph. With `options.profile`,
/// every run records an event before each kernel (the plan runs kernel by
/// kernel).
///
/// A run copies the inputs to pinned staging memory (the caller may reuse
/// them at once), then to the GPU; the plan runs on the session's stream;
/// the outputs come back to staging memory, and are copied where the run
/// was told when it is waited for. `state` and `model` must outlive the
/// device.
kiln_status_t openGpuDevice(GpuModel &state, const kiln_model_t &model,
                            const DeviceOptions &options, std::unique_ptr<Device> &out);

/// Opens a session on `name`, "PREFIX" or "PREFIX:N" (`prefix` "cuda" or
/// "hip"): `driverError` opens the vendor's driver and says why it cannot
/// be used (empty when it can), `create` makes the model's state on GPU N,
/// shared by every session there (openGpuModel), then openGpuDevice.
kiln_status_t openNamedGpu(kiln_model_t *model, const char *name, const char *prefix,
                           const std::function<std::string()> &driverError,
                           const std::function<std::unique_ptr<GpuModel>(int)> &create,
                           const DeviceOptions &options, std::unique_ptr<Device> &out);

} // namespace kiln::gpu

#endif // KILN_RUNTIME_GPU_GPUDEVICE_H
