// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A model on one NVIDIA GPU: the code chosen for its architecture, loaded
// in the GPU's primary context, and the weights, uploaded once and shared
// by every session there; the GPU interface over the CUDA driver API.

#ifndef KILN_RUNTIME_CUDA_CUDAMODEL_H
#define KILN_RUNTIME_CUDA_CUDAMODEL_H

#include "runtime/src/cuda/DynamicSymbols.h"
#include "runtime/src/gpu/GpuModel.h"

namespace kiln::cuda {

/// A model's code and weights on "cuda:N".
class CudaModel final : public gpu::GpuModel {
public:
  CudaModel(const Driver &d, int ordinal) : d(d), ordinal(ordinal) {}
  ~CudaModel() override;

  /// Loads the model's code for the GPU's architecture (a cubin built for
  /// it, else PTX for the driver to compile) and uploads the plan's weights.
  kiln_status_t load(const kiln_model_t &model) override;

  std::string describeError(int status) const override;
  bool outOfMemory(int status) const override { return status == CUDA_ERROR_OUT_OF_MEMORY; }
  bool enter() override { return d.ctxPushCurrent(context) == CUDA_SUCCESS; }
  void leave() override {
    CUcontext popped;
    d.ctxPopCurrent(&popped);
  }
  int moduleUnload(gpu::Handle module) override {
    return d.moduleUnload(static_cast<CUmodule>(module));
  }
  int moduleGetGlobal(gpu::DevicePtr *address, size_t *bytes, const char *symbol) override {
    return d.moduleGetGlobal(address, bytes, static_cast<CUmodule>(module), symbol);
  }
  int moduleGetFunction(gpu::Handle *function, const char *kernel) override {
    return d.moduleGetFunction(reinterpret_cast<CUfunction *>(function),
                               static_cast<CUmodule>(module), kernel);
  }
  int prepareFunction(gpu::Handle function, const Launch &launch) override;
  int malloc(gpu::DevicePtr *address, size_t bytes) override { return d.memAlloc(address, bytes); }
  int free(gpu::DevicePtr address) override { return d.memFree(address); }
  int hostMalloc(void **memory, size_t bytes) override { return d.memAllocHost(memory, bytes); }
  int hostFree(void *memory) override { return d.memFreeHost(memory); }
  int copyToDevice(gpu::DevicePtr to, const void *from, size_t bytes) override {
    return d.memcpyHtoD(to, from, bytes);
  }
  int copyToHost(void *to, gpu::DevicePtr from, size_t bytes) override {
    return d.memcpyDtoH(to, from, bytes);
  }
  int copyToDeviceAsync(gpu::DevicePtr to, const void *from, size_t bytes,
                        gpu::Handle stream) override {
    return d.memcpyHtoDAsync(to, from, bytes, static_cast<CUstream>(stream));
  }
  int copyToHostAsync(void *to, gpu::DevicePtr from, size_t bytes, gpu::Handle stream) override {
    return d.memcpyDtoHAsync(to, from, bytes, static_cast<CUstream>(stream));
  }
  int streamCreate(gpu::Handle *stream) override {
    return d.streamCreate(reinterpret_cast<CUstream *>(stream), kStreamNonBlocking);
  }
  int streamDestroy(gpu::Handle stream) override {
    return d.streamDestroy(static_cast<CUstream>(stream));
  }
  int streamSynchronize(gpu::Handle stream) override {
    return d.streamSynchronize(static_cast<CUstream>(stream));
  }
  int eventCreate(gpu::Handle *event) override {
    return d.eventCreate(reinterpret_cast<CUevent *>(event), 0);
  }
  int eventDestroy(gpu::Handle event) override {
    return d.eventDestroy(static_cast<CUevent>(event));
  }
  int eventRecord(gpu::Handle event, gpu::Handle stream) override {
    return d.eventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream));
  }
  int eventElapsed(float *milliseconds, gpu::Handle start, gpu::Handle end) override {
    return d.eventElapsedTime(milliseconds, static_cast<CUevent>(start), static_cast<CUevent>(end));
  }
  int launch(gpu::Handle function, const Launch &launch, gpu::Handle stream,
             void **params) override {
    return d.launchKernel(static_cast<CUfunction>(function), launch.grid[0], launch.grid[1],
                          launch.grid[2], launch.block[0], launch.block[1], launch.block[2],
                          launch.sharedBytes, static_cast<CUstream>(stream), params, nullptr);
  }
  int beginCapture(gpu::Handle stream) override {
    return d.streamBeginCapture(static_cast<CUstream>(stream), kCaptureThreadLocal);
  }
  int endCapture(gpu::Handle stream, gpu::Handle *graph) override {
    return d.streamEndCapture(static_cast<CUstream>(stream), reinterpret_cast<CUgraph *>(graph));
  }
  int graphInstantiate(gpu::Handle *exec, gpu::Handle graph) override {
    return d.graphInstantiate(reinterpret_cast<CUgraphExec *>(exec), static_cast<CUgraph>(graph),
                              0);
  }
  int graphLaunch(gpu::Handle exec, gpu::Handle stream) override {
    return d.graphLaunch(static_cast<CUgraphExec>(exec), static_cast<CUstream>(stream));
  }
  int graphExecDestroy(gpu::Handle exec) override {
    return d.graphExecDestroy(static_cast<CUgraphExec>(exec));
  }
  int graphDestroy(gpu::Handle graph) override {
    return d.graphDestroy(static_cast<CUgraph>(graph));
  }
  kiln_status_t tensorMapsUnavailable() const override;
  int encodeTensorMap(void *map, const LaunchArg &arg, gpu::DevicePtr address) override;

private:
  const Driver &d;
  int ordinal;
  CUdevice device = 0;
  CUcontext context = nullptr;
};

} // namespace kiln::cuda

#endif // KILN_RUNTIME_CUDA_CUDAMODEL_H
