// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A model on one GPU, and the driver calls GPU devices make, behind one
// interface: each vendor's folder (cuda/, hip/) implements it over its
// driver, opened with dlopen, and the session's device (GpuDevice.h) is
// the same for all of them.

#ifndef KILN_RUNTIME_GPU_GPUMODEL_H
#define KILN_RUNTIME_GPU_GPUMODEL_H

#include "runtime/src/Model.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::gpu {

/// A driver's stream, event, graph, module or function.
using Handle = void *;
/// An address in the GPU's memory (as CUdeviceptr declares it).
using DevicePtr = unsigned long long;

/// A model's code and weights on one GPU ("cuda:0", "hip:1"), loaded by
/// the first session there and shared by all of them, and the calls to the
/// GPU's driver. Each call returns the driver's status: 0 is success.
class GpuModel : public DeviceModel {
public:
  std::string name;        ///< "cuda:0"
  std::string description; ///< what kiln_session_device says
  std::string target;      ///< the code's target: "sm_90a", "gfx942"
  const Plan *plan = nullptr;
  Handle module = nullptr;
  DevicePtr weights = 0;
  std::vector<Handle> functions; ///< one per launch of the plan

  /// Finds the GPU, chooses the model's code for it, loads the code and
  /// uploads the plan's weights (through `finishLoading`).
  virtual kiln_status_t load(const kiln_model_t &model) = 0;

  /// The driver's name and description of `status`.
  virtual std::string describeError(int status) const = 0;
  virtual bool outOfMemory(int status) const = 0;

  /// Makes the GPU current on the calling thread, until `leave`.
  virtual bool enter() = 0;
  virtual void leave() = 0;

  virtual int moduleUnload(Handle module) = 0;
  virtual int moduleGetGlobal(DevicePtr *address, size_t *bytes, const char *symbol) = 0;
  virtual int moduleGetFunction(Handle *function, const char *kernel) = 0;
  /// Readies a kernel for its launch (more shared memory than by default).
  virtual int prepareFunction(Handle function, const Launch &launch) { return 0; }

  virtual int malloc(DevicePtr *address, size_t bytes) = 0;
  virtual int free(DevicePtr address) = 0;
  /// Pinned host memory, which asynchronous copies need.
  virtual int hostMalloc(void **memory, size_t bytes) = 0;
  virtual int hostFree(void *memory) = 0;
  virtual int copyToDevice(DevicePtr to, const void *from, size_t bytes) = 0;
  virtual int copyToHost(void *to, DevicePtr from, size_t bytes) = 0;
  virtual int copyToDeviceAsync(DevicePtr to, const void *from, size_t bytes, Handle stream) = 0;
  virtual int copyToHostAsync(void *to, DevicePtr from, size_t bytes, Handle stream) = 0;

  /// A stream that does not synchronize with the default one.
  virtual int streamCreate(Handle *stream) = 0;
  virtual int streamDestroy(Handle stream) = 0;
  virtual int streamSynchronize(Handle stream) = 0;
  virtual int eventCreate(Handle *event) = 0;
  virtual int eventDestroy(Handle event) = 0;
  virtual int eventRecord(Handle event, Handle stream) = 0;
  virtual int eventElapsed(float *milliseconds, Handle start, Handle end) = 0;

  /// Launches `function` with `launch`'s grid, block and shared memory;
  /// `params` points to each parameter.
  virtual int launch(Handle function, const Launch &launch, Handle stream, void **params) = 0;
  /// Captures what is queued on `stream` (by this thread) into a graph.
  virtual int beginCapture(Handle stream) = 0;
  virtual int endCapture(Handle stream, Handle *graph) = 0;
  virtual int graphInstantiate(Handle *exec, Handle graph) = 0;
  virtual int graphLaunch(Handle exec, Handle stream) = 0;
  virtual int graphExecDestroy(Handle exec) = 0;
  virtual int graphDestroy(Handle graph) = 0;

  /// Why the driver cannot encode the TMA tensor maps a plan's launches
  /// take; NULL when it can.
  virtual kiln_status_t tensorMapsUnavailable() const = 0;
  /// Encodes `arg`'s tensor map over `address` into `map`, kTensorMapBytes
  /// aligned to as many.
  virtual int encodeTensorMap(void *map, const LaunchArg &arg, DevicePtr address) = 0;
  static constexpr size_t kTensorMapBytes = 128, kTensorMapAlignment = 64;

protected:
  /// What follows loading the module for `code`: the plan record the code
  /// holds checked against the manifest, each launch's function looked up
  /// and readied, the weights uploaded.
  kiln_status_t finishLoading(const kiln_model_t &model, const CodeSection &code);
  /// Frees the weights and unloads the module, the GPU current: what the
  /// vendors' models' destructors call first.
  void release();
};

/// The model's state on the GPU `name` ("cuda:0"): made with `create`
/// and loaded by the first session there, shared by those after it.
kiln_status_t openGpuModel(kiln_model_t &model, const std::string &name,
                           const std::function<std::unique_ptr<GpuModel>()> &create,
                           GpuModel **out);

/// A status for a failed driver call: "NAME: what: the driver's error";
/// out of memory is RESOURCE_EXHAUSTED, anything else INTERNAL.
kiln_status_t failure(const GpuModel &gpu, int status, const std::string &what);

/// Makes a GPU current for a scope.
class Current {
public:
  explicit Current(GpuModel &gpu) : gpu(gpu), entered(gpu.enter()) {}
  ~Current() {
    if (entered)
      gpu.leave();
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;
  bool ok() const { return entered; }

private:
  GpuModel &gpu;
  bool entered;
};

} // namespace kiln::gpu

#endif // KILN_RUNTIME_GPU_GPUMODEL_H
