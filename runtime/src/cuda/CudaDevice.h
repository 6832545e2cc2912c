// The CUDA device: kiln's GPU plans run through the CUDA driver API, which is
// opened with dlopen on first use, so the runtime needs no CUDA to build or
// load, and the host device works on machines without a driver or a GPU.

#ifndef KILN_RUNTIME_CUDA_CUDADEVICE_H
#define KILN_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/src/Device.h"

namespace kiln::cuda {

/// Opens `model` on `name`, "cuda" or "cuda:N": loads the model's code for
/// the GPU's architecture and uploads the weights (once per model and GPU,
/// CudaModel.h), allocates the session's memory in one piece and, with
/// `options.useGraph` and without `options.profile`, captures the plan as a
/// CUDA graph. With `options.profile`, every run records an event before
/// each kernel (the plan runs kernel by kernel).
///
/// A run copies the inputs to pinned staging memory (the caller may reuse
/// them at once), then to the GPU; the plan runs on the session's stream;
/// the outputs come back to staging memory, and are copied where the run
/// was told when it is waited for. `model` must outlive the device.
kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out);

} // namespace kiln::cuda

#endif // KILN_RUNTIME_CUDA_CUDADEVICE_H
