// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A model on one AMD GPU: the code object for its architecture, loaded,
// and the weights, uploaded once and shared by every session there; the
// GPU interface over the HIP runtime API.

#ifndef KILN_RUNTIME_HIP_HIPMODEL_H
#define KILN_RUNTIME_HIP_HIPMODEL_H

#include "runtime/src/gpu/GpuModel.h"
#include "runtime/src/hip/HipSymbols.h"

namespace kiln::hip {

/// A model's code and weights on "hip:N".
class HipModel final : public gpu::GpuModel {
public:
  HipModel(const Loaded &loaded, int ordinal)
      : d(loaded.driver), loaded(loaded), ordinal(ordinal) {}
  ~HipModel() override { release(); }

  /// Loads the model's code object for the GPU's architecture (gfx942,
  /// ...) and uploads the plan's weights.
  kiln_status_t load(const kiln_model_t &model) override;

  std::string describeError(int status) const override;
  bool outOfMemory(int status) const override { return status == hipErrorOutOfMemory; }
  /// HIP's current device is the thread's: set for the call, then restored.
  bool enter() override;
  void leave() override;
  int moduleUnload(gpu::Handle module) override {
    return d.moduleUnload(static_cast<hipModule_t>(module));
  }
  int moduleGetGlobal(gpu::DevicePtr *address, size_t *bytes, const char *symbol) override;
  int moduleGetFunction(gpu::Handle *function, const char *kernel) override {
    return d.moduleGetFunction(reinterpret_cast<hipFunction_t *>(function),
                               static_cast<hipModule_t>(module), kernel);
  }
  int malloc(gpu::DevicePtr *address, size_t bytes) override;
  int free(gpu::DevicePtr address) override { return d.free(pointer(address)); }
  int hostMalloc(void **memory, size_t bytes) override { return d.hostMalloc(memory, bytes, 0); }
  int hostFree(void *memory) override { return d.hostFree(memory); }
  int copyToDevice(gpu::DevicePtr to, const void *from, size_t bytes) override {
    return d.memcpyHtoD(pointer(to), from, bytes);
  }
  int copyToHost(void *to, gpu::DevicePtr from, size_t bytes) override {
    return d.memcpyDtoH(to, pointer(from), bytes);
  }
  int copyToDeviceAsync(gpu::DevicePtr to, const void *from, size_t bytes,
                        gpu::Handle stream) override {
    return d.memcpyHtoDAsync(pointer(to), from, bytes, static_cast<hipStream_t>(stream));
  }
  int copyToHostAsync(void *to, gpu::DevicePtr from, size_t bytes, gpu::Handle stream) override {
    return d.memcpyDtoHAsync(to, pointer(from), bytes, static_cast<hipStream_t>(stream));
  }
  int streamCreate(gpu::Handle *stream) override {
    return d.streamCreateWithFlags(reinterpret_cast<hipStream_t *>(stream), hipStreamNonBlocking);
  }
  int streamDestroy(gpu::Handle stream) override {
    return d.streamDestroy(static_cast<hipStream_t>(stream));
  }
  int streamSynchronize(gpu::Handle stream) override {
    return d.streamSynchronize(static_cast<hipStream_t>(stream));
  }
  int eventCreate(gpu::Handle *event) override {
    return d.eventCreate(reinterpret_cast<hipEvent_t *>(event));
  }
  int eventDestroy(gpu::Handle event) override {
    return d.eventDestroy(static_cast<hipEvent_t>(event));
  }
  int eventRecord(gpu::Handle event, gpu::Handle stream) override {
    return d.eventRecord(static_cast<hipEvent_t>(event), static_cast<hipStream_t>(stream));
  }
  int eventElapsed(float *milliseconds, gpu::Handle start, gpu::Handle end) override {
    return d.eventElapsedTime(milliseconds, static_cast<hipEvent_t>(start),
                              static_cast<hipEvent_t>(end));
  }
  int launch(gpu::Handle function, const Launch &launch, gpu::Handle stream,
             void **params) override {
    return d.moduleLaunchKernel(static_cast<hipFunction_t>(function), launch.grid[0],
                                launch.grid[1], launch.grid[2], launch.block[0], launch.block[1],
                                launch.block[2], launch.sharedBytes,
                                static_cast<hipStream_t>(stream), params, nullptr);
  }
  int beginCapture(gpu::Handle stream) override {
    return d.streamBeginCapture(static_cast<hipStream_t>(stream), hipStreamCaptureModeThreadLocal);
  }
  int endCapture(gpu::Handle stream, gpu::Handle *graph) override {
    return d.streamEndCapture(static_cast<hipStream_t>(stream),
                              reinterpret_cast<hipGraph_t *>(graph));
  }
  int graphInstantiate(gpu::Handle *exec, gpu::Handle graph) override {
    return d.graphInstantiate(reinterpret_cast<hipGraphExec_t *>(exec),
                              static_cast<hipGraph_t>(graph), nullptr, nullptr, 0);
  }
  int graphLaunch(gpu::Handle exec, gpu::Handle stream) override {
    return d.graphLaunch(static_cast<hipGraphExec_t>(exec), static_cast<hipStream_t>(stream));
  }
  int graphExecDestroy(gpu::Handle exec) override {
    return d.graphExecDestroy(static_cast<hipGraphExec_t>(exec));
  }
  int graphDestroy(gpu::Handle graph) override {
    return d.graphDestroy(static_cast<hipGraph_t>(graph));
  }
  kiln_status_t tensorMapsUnavailable() const override;
  int encodeTensorMap(void *map, const LaunchArg &arg, gpu::DevicePtr address) override;

private:
  static void *pointer(gpu::DevicePtr address) { return reinterpret_cast<void *>(address); }

  const Driver &d;
  const Loaded &loaded;
  int ordinal;
};

} // namespace kiln::hip

#endif // KILN_RUNTIME_HIP_HIPMODEL_H
