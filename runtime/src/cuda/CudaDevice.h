// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA device: kiln's GPU plans run through the CUDA driver API, which is
// opened with dlopen on first use, so the runtime needs no CUDA to build or
// load, and the host device works on machines without a driver or a GPU.

#ifndef KILN_RUNTIME_CUDA_CUDADEVICE_H
#define KILN_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/src/Device.h"

namespace kiln::cuda {

/// PTX or a cubin for an NVIDIA architecture (sm_80, sm_90a, ...).
bool runsCode(artifact::CodeKind kind, std::string_view target);

/// Opens `model` on `name`, "cuda" or "cuda:N": loads the model's code for
/// the GPU's architecture and uploads the weights (once per model and GPU,
/// CudaModel.h), then opens a session there (gpu/GpuDevice.h), whose graph
/// is a CUDA graph. `model` must outlive the device.
kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out);

} // namespace kiln::cuda

#endif // KILN_RUNTIME_CUDA_CUDADEVICE_H
