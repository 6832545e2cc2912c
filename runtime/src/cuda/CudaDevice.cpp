#include "runtime/src/cuda/CudaDevice.h"

#include "runtime/src/Status.h"
#include "runtime/src/cuda/CudaModel.h"
#include "runtime/src/cuda/DriverUtil.h"
#include "runtime/src/gpu/LaunchParams.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kiln::cuda {

namespace {

size_t align(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

class CudaDevice final : public Device {
public:
  CudaDevice(CudaModel &state, const Driver &d, const kiln_model_t &model)
      : state(state), d(d), model(model) {}
  ~CudaDevice() override;

  /// Creates the stream and events, allocates the memory, lays out the
  /// parameters and, with `useGraph`, captures the plan.
  kiln_status_t setUp(bool useGraph, bool profile);

  const char *describe() const override { return state.description.c_str(); }
  const char *target() const override { return state.target.c_str(); }
  unsigned threads() const override { return 0; }
  kiln_status_t enqueue(const std::vector<const void *> &inputs,
                        const std::vector<void *> &outputs) override;
  kiln_status_t wait() override;
  double kernelMilliseconds() const override { return lastMilliseconds; }
  size_t kernelProfile(double *milliseconds, size_t count) const override {
    std::copy_n(profile.begin(), std::min(count, profile.size()), milliseconds);
    return profile.size();
  }

private:
  kiln_status_t launchAll();
  CUresult encodeTensorMap(const LaunchArg &arg, TensorMap *map) const;
  kiln_status_t buildParams(CUdeviceptr maps);

  CudaModel &state;
  const Driver &d;
  const kiln_model_t &model;
  CUstream stream = nullptr;
  /// The arena, then each input, then each output, then the tensor maps:
  /// one allocation.
  CUdeviceptr memory = 0;
  gpu::DeviceBuffers buffers;
  /// Pinned host memory the copies go through, inputs then outputs.
  uint8_t *staging = nullptr;
  std::vector<size_t> inputStaging, outputStaging;
  gpu::LaunchParams params;
  CUgraphExec graph = nullptr;
  /// Recorded around the plan's kernels, for the device time of a run.
  CUevent started = nullptr, finished = nullptr;
  double lastMilliseconds = 0;
  /// When profiling: recorded before each kernel, and each kernel's time
  /// in the last run.
  std::vector<CUevent> marks;
  std::vector<double> profile;
  /// Where the queued run's outputs go when it is waited for.
  std::vector<void *> pending;
  bool queued = false;
  /// A failed kernel leaves the context unusable: every later run fails.
  std::string broken;
};

CudaDevice::~CudaDevice() {
  Current current(d, state.context);
  if (stream)
    d.streamSynchronize(stream);
  if (graph)
    d.graphExecDestroy(graph);
  if (started)
    d.eventDestroy(started);
  if (finished)
    d.eventDestroy(finished);
  for (CUevent mark : marks)
    d.eventDestroy(mark);
  if (stream)
    d.streamDestroy(stream);
  if (memory)
    d.memFree(memory);
  if (staging)
    d.memFreeHost(staging);
}

kiln_status_t CudaDevice::launchAll() {
  const Plan &plan = *state.plan;
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    const Launch &launch = plan.launches[i];
    if (!marks.empty())
      if (CUresult status = d.eventRecord(marks[i], stream))
        return failure(d, status, state.ordinal, "cannot record an event");
    if (CUresult status =
            d.launchKernel(state.functions[i], launch.grid[0], launch.grid[1], launch.grid[2],
                           launch.block[0], launch.block[1], launch.block[2], launch.sharedBytes,
                           stream, params.pointers[i].data(), nullptr))
      return failure(d, status, state.ordinal,
                     "cannot launch kernel " + std::to_string(i) + " (" + launch.kernel + ")");
  }
  return nullptr;
}

/// Encodes the tensor map of `arg` (which has one) over its buffer.
CUresult CudaDevice::encodeTensorMap(const LaunchArg &arg, TensorMap *map) const {
  uint32_t rank = uint32_t(arg.mapDims.size());
  std::vector<uint32_t> elementStrides(rank, 1);
  // CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B and _128B are 0 to 3.
  int swizzle = arg.swizzle == 128 ? 3 : arg.swizzle == 64 ? 2 : arg.swizzle == 32 ? 1 : 0;
  void *address = reinterpret_cast<void *>(gpu::addressOf(buffers, arg) + arg.offset * 4);
  return d.tensorMapEncodeTiled(map, kTensorMapFloat32, rank, address, arg.mapDims.data(),
                                arg.mapStrides.data(), arg.mapBox.data(), elementStrides.data(),
                                /*interleave=*/0, swizzle, kTensorMapL2Promotion256,
                                /*oobFill=*/0);
}

/// Lays out every launch's parameters (gpu/LaunchParams.h); each tensor map
/// is encoded now that its buffer's address is known, and uploaded, in the
/// order of the arguments, to `maps`.
kiln_status_t CudaDevice::buildParams(CUdeviceptr maps) {
  const Plan &plan = *state.plan;
  std::vector<TensorMap> encoded;
  auto tensorMap = [&](size_t launch, const LaunchArg &arg, uint64_t &address) -> kiln_status_t {
    if (CUresult status = encodeTensorMap(arg, &encoded.emplace_back()))
      return failure(d, status, state.ordinal,
                     "cannot encode a tensor map for kernel " + std::to_string(launch) + " (" +
                         plan.launches[launch].kernel + ")");
    address = maps + (encoded.size() - 1) * sizeof(TensorMap);
    return nullptr;
  };
  if (kiln_status_t status = gpu::layOutParams(plan, buffers, tensorMap, params))
    return status;
  if (!encoded.empty())
    if (CUresult status = d.memcpyHtoD(maps, encoded.data(), encoded.size() * sizeof(TensorMap)))
      return failure(d, status, state.ordinal, "cannot upload the tensor maps");
  return nullptr;
}

kiln_status_t CudaDevice::setUp(bool useGraph, bool profile) {
  int ordinal = state.ordinal;
  const Plan &plan = *state.plan;
  Current current(d, state.context);
  if (!current.ok())
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: cannot make its context current", ordinal);
  if (CUresult status = d.streamCreate(&stream, kStreamNonBlocking)) {
    stream = nullptr;
    return failure(d, status, ordinal, "cannot create a stream");
  }
  std::vector<CUevent *> events = {&started, &finished};
  if (profile) {
    marks.resize(plan.launches.size());
    for (CUevent &mark : marks)
      events.push_back(&mark);
  }
  for (CUevent *event : events)
    if (CUresult status = d.eventCreate(event, 0)) {
      *event = nullptr;
      return failure(d, status, ordinal, "cannot create an event");
    }
  // One allocation: the arena, then the inputs and outputs, 256-byte aligned.
  size_t bytes = align(plan.arenaBytes, 256);
  std::vector<size_t> inputOffsets, outputOffsets;
  size_t stagingBytes = 0;
  for (const TensorInfo &input : model.inputs) {
    inputOffsets.push_back(bytes);
    bytes = align(bytes + input.byteSize, 256);
    inputStaging.push_back(stagingBytes);
    stagingBytes = align(stagingBytes + input.byteSize, 64);
  }
  for (const TensorInfo &output : model.outputs) {
    outputOffsets.push_back(bytes);
    bytes = align(bytes + output.byteSize, 256);
    outputStaging.push_back(stagingBytes);
    stagingBytes = align(stagingBytes + output.byteSize, 64);
  }
  size_t mapsOffset = align(bytes, sizeof(TensorMap));
  size_t numMaps = gpu::countTensorMaps(plan);
  if (numMaps && !d.tensorMapEncodeTiled)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cuda:%d: the plan's kernels copy with TMA, and the CUDA driver cannot "
                      "encode tensor maps (cuTensorMapEncodeTiled, CUDA 12 and later)",
                      ordinal);
  if (numMaps)
    bytes = mapsOffset + numMaps * sizeof(TensorMap);
  if (CUresult status = d.memAlloc(&memory, bytes ? bytes : 1)) {
    memory = 0;
    return failure(d, status, ordinal,
                   "cannot allocate the session's " + std::to_string(bytes) +
                       " bytes of device memory (activations, inputs and outputs)");
  }
  void *pinned = nullptr;
  if (CUresult status = d.memAllocHost(&pinned, stagingBytes ? stagingBytes : 1))
    return failure(d, status, ordinal, "cannot allocate pinned host memory for the copies");
  staging = static_cast<uint8_t *>(pinned);
  buffers.arena = memory;
  buffers.weights = state.weights;
  for (size_t offset : inputOffsets)
    buffers.inputs.push_back(memory + offset);
  for (size_t offset : outputOffsets)
    buffers.outputs.push_back(memory + offset);
  if (kiln_status_t status = buildParams(memory + mapsOffset))
    return status;
  if (!useGraph)
    return nullptr;

  // The plan never changes: capture it once, replay it every run.
  if (CUresult status = d.streamBeginCapture(stream, kCaptureThreadLocal))
    return failure(d, status, ordinal, "cannot capture the plan as a CUDA graph");
  kiln_status_t launched = launchAll();
  CUgraph captured = nullptr;
  CUresult ended = d.streamEndCapture(stream, &captured);
  if (launched) {
    if (captured)
      d.graphDestroy(captured);
    return launched;
  }
  if (ended)
    return failure(d, ended, ordinal, "cannot capture the plan as a CUDA graph");
  CUresult instantiated = d.graphInstantiate(&graph, captured, 0);
  d.graphDestroy(captured);
  if (instantiated) {
    graph = nullptr;
    return failure(d, instantiated, ordinal, "cannot instantiate the plan's CUDA graph");
  }
  return nullptr;
}

kiln_status_t CudaDevice::wait() {
  if (!queued)
    return nullptr;
  queued = false;
  Current current(d, state.context);
  if (CUresult status = d.streamSynchronize(stream)) {
    broken = "a kernel failed: " + describeError(d, status) +
             "; the GPU context cannot recover, so this session cannot run again";
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: %s", state.ordinal, broken.c_str());
  }
  for (size_t i = 0; i < model.outputs.size(); ++i)
    memcpy(pending[i], staging + outputStaging[i], model.outputs[i].byteSize);
  float milliseconds = 0;
  if (CUresult status = d.eventElapsedTime(&milliseconds, started, finished))
    return failure(d, status, state.ordinal, "cannot time the run");
  lastMilliseconds = milliseconds;
  profile.clear();
  for (size_t i = 0; i < marks.size(); ++i) {
    CUevent end = i + 1 < marks.size() ? marks[i + 1] : finished;
    if (CUresult status = d.eventElapsedTime(&milliseconds, marks[i], end))
      return failure(d, status, state.ordinal, "cannot time a kernel");
    profile.push_back(milliseconds);
  }
  return nullptr;
}

kiln_status_t CudaDevice::enqueue(const std::vector<const void *> &inputs,
                                  const std::vector<void *> &outputs) {
  if (kiln_status_t status = wait())
    return status;
  if (!broken.empty())
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: %s", state.ordinal, broken.c_str());
  int ordinal = state.ordinal;
  Current current(d, state.context);
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    uint8_t *staged = staging + inputStaging[i];
    memcpy(staged, inputs[i], model.inputs[i].byteSize);
    if (CUresult status =
            d.memcpyHtoDAsync(buffers.inputs[i], staged, model.inputs[i].byteSize, stream))
      return failure(d, status, ordinal, "cannot copy an input to the GPU");
  }
  if (CUresult status = d.eventRecord(started, stream))
    return failure(d, status, ordinal, "cannot record an event");
  if (graph) {
    if (CUresult status = d.graphLaunch(graph, stream))
      return failure(d, status, ordinal, "cannot launch the plan's CUDA graph");
  } else if (kiln_status_t status = launchAll()) {
    return status;
  }
  if (CUresult status = d.eventRecord(finished, stream))
    return failure(d, status, ordinal, "cannot record an event");
  for (size_t i = 0; i < model.outputs.size(); ++i)
    if (CUresult status = d.memcpyDtoHAsync(staging + outputStaging[i], buffers.outputs[i],
                                            model.outputs[i].byteSize, stream))
      return failure(d, status, ordinal, "cannot copy an output from the GPU");
  pending = outputs;
  queued = true;
  return nullptr;
}

} // namespace

kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out) {
  // "cuda" or "cuda:N".
  char *end = nullptr;
  long ordinal = name[4] ? strtol(name + 5, &end, 10) : 0;
  if (name[4] && (end == name + 5 || *end != '\0' || ordinal < 0 || ordinal > 1024))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "device '%s': expected cuda:N, N the GPU's number from 0", name);
  const Loaded &loaded = loadDriver();
  if (!loaded.error.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "device 'cuda:%d' is not available: %s",
                      int(ordinal), loaded.error.c_str());
  CudaModel *state = nullptr;
  if (kiln_status_t status = openModel(model, loaded.driver, int(ordinal), &state))
    return status;
  auto device =
      std::unique_ptr<CudaDevice>(new (std::nothrow) CudaDevice(*state, loaded.driver, *model));
  if (!device)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (kiln_status_t status = device->setUp(options.useGraph && !options.profile, options.profile))
    return status;
  out = std::move(device);
  return nullptr;
}

} // namespace kiln::cuda
