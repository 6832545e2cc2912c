// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/gpu/GpuDevice.h"

#include "runtime/format/DimProgram.h"
#include "runtime/src/Status.h"
#include "runtime/src/gpu/LaunchParams.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kiln::gpu {

namespace {

size_t align(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

class GpuDevice final : public Device {
public:
  GpuDevice(GpuModel &state, const kiln_model_t &model) : state(state), model(model) {}
  ~GpuDevice() override;

  /// Creates the stream and events, allocates the memory, lays out the
  /// parameters and, with `useGraph`, captures the plan.
  kiln_status_t setUp(bool useGraph, bool profile);

  const char *describe() const override { return state.description.c_str(); }
  const char *target() const override { return state.target.c_str(); }
  unsigned threads() const override { return 0; }
  kiln_status_t enqueue(const std::vector<const void *> &inputs, const std::vector<void *> &outputs,
                        const std::vector<int64_t> &symbols) override;
  kiln_status_t wait() override;
  double kernelMilliseconds() const override { return lastMilliseconds; }
  size_t kernelProfile(double *milliseconds, size_t count) const override {
    std::copy_n(profile.begin(), std::min(count, profile.size()), milliseconds);
    return profile.size();
  }

private:
  kiln_status_t launchAll();
  kiln_status_t buildParams(DevicePtr maps);
  kiln_status_t captureGraph();

  GpuModel &state;
  const kiln_model_t &model;
  Handle stream = nullptr;
  /// The arena, then each input, then each output, then the tensor maps:
  /// one allocation.
  DevicePtr memory = 0;
  DeviceBuffers buffers;
  /// Pinned host memory the copies go through, inputs then outputs.
  uint8_t *staging = nullptr;
  std::vector<size_t> inputStaging, outputStaging;
  LaunchParams params;
  /// The plan's launches as this run makes them: in a symbolic plan, the
  /// fields its programs give evaluated at the run's sizes.
  std::vector<Launch> launches;
  bool symbolic = false;
  /// Each input's and output's bytes in this run.
  std::vector<size_t> inputBytes, outputBytes;
  Handle graph = nullptr;
  /// Recorded around the plan's kernels, for the device time of a run.
  Handle started = nullptr, finished = nullptr;
  double lastMilliseconds = 0;
  /// When profiling: recorded before each kernel, and each kernel's time
  /// in the last run.
  std::vector<Handle> marks;
  std::vector<double> profile;
  /// Where the queued run's outputs go when it is waited for.
  std::vector<void *> pending;
  bool queued = false;
  /// A failed kernel leaves the GPU's context unusable: every later run
  /// fails.
  std::string broken;
};

GpuDevice::~GpuDevice() {
  Current current(state);
  if (stream)
    state.streamSynchronize(stream);
  if (graph)
    state.graphExecDestroy(graph);
  if (started)
    state.eventDestroy(started);
  if (finished)
    state.eventDestroy(finished);
  for (Handle mark : marks)
    state.eventDestroy(mark);
  if (stream)
    state.streamDestroy(stream);
  if (memory)
    state.free(memory);
  if (staging)
    state.hostFree(staging);
}

kiln_status_t GpuDevice::launchAll() {
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!marks.empty())
      if (int status = state.eventRecord(marks[i], stream))
        return failure(state, status, "cannot record an event");
    // A grid a run empties has nothing to do.
    const Launch &launch = launches[i];
    if (!launch.grid[0] || !launch.grid[1] || !launch.grid[2])
      continue;
    if (int status = state.launch(state.functions[i], launch, stream, params.pointers[i].data()))
      return failure(state, status,
                     "cannot launch kernel " + std::to_string(i) + " (" + launch.kernel + ")");
  }
  return nullptr;
}

/// Lays out every launch's parameters (LaunchParams.h); each tensor map is
/// encoded now that its buffer's address is known, and uploaded, in the
/// order of the arguments, to `maps`.
kiln_status_t GpuDevice::buildParams(DevicePtr maps) {
  const Plan &plan = *state.plan;
  struct alignas(GpuModel::kTensorMapAlignment) Map {
    uint8_t bytes[GpuModel::kTensorMapBytes];
  };
  std::vector<Map> encoded;
  auto tensorMap = [&](size_t launch, const LaunchArg &arg, uint64_t &address) -> kiln_status_t {
    if (int status = state.encodeTensorMap(&encoded.emplace_back(), arg,
                                           addressOf(buffers, arg) + arg.offset * 4))
      return failure(state, status,
                     "cannot encode a tensor map for kernel " + std::to_string(launch) + " (" +
                         plan.launches[launch].kernel + ")");
    address = maps + (encoded.size() - 1) * sizeof(Map);
    return nullptr;
  };
  if (kiln_status_t status = layOutParams(launches, buffers, tensorMap, params))
    return status;
  if (!encoded.empty())
    if (int status = state.copyToDevice(maps, encoded.data(), encoded.size() * sizeof(Map)))
      return failure(state, status, "cannot upload the tensor maps");
  return nullptr;
}

/// A static plan never changes: captured once, replayed every run.
kiln_status_t GpuDevice::captureGraph() {
  if (int status = state.beginCapture(stream))
    return failure(state, status, "cannot capture the plan as a graph");
  kiln_status_t launched = launchAll();
  Handle captured = nullptr;
  int ended = state.endCapture(stream, &captured);
  if (launched) {
    if (captured)
      state.graphDestroy(captured);
    return launched;
  }
  if (ended)
    return failure(state, ended, "cannot capture the plan as a graph");
  int instantiated = state.graphInstantiate(&graph, captured);
  state.graphDestroy(captured);
  if (instantiated) {
    graph = nullptr;
    return failure(state, instantiated, "cannot instantiate the plan's graph");
  }
  return nullptr;
}

kiln_status_t GpuDevice::setUp(bool useGraph, bool profile) {
  const Plan &plan = *state.plan;
  Current current(state);
  if (!current.ok())
    return makeStatus(KILN_STATUS_INTERNAL, "%s: cannot make the GPU current", state.name.c_str());
  if (int status = state.streamCreate(&stream)) {
    stream = nullptr;
    return failure(state, status, "cannot create a stream");
  }
  std::vector<Handle *> events = {&started, &finished};
  if (profile) {
    marks.resize(plan.launches.size());
    for (Handle &mark : marks)
      events.push_back(&mark);
  }
  for (Handle *event : events)
    if (int status = state.eventCreate(event)) {
      *event = nullptr;
      return failure(state, status, "cannot create an event");
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
  size_t mapsOffset = align(bytes, GpuModel::kTensorMapAlignment);
  if (size_t maps = countTensorMaps(plan)) {
    if (kiln_status_t status = state.tensorMapsUnavailable())
      return status;
    bytes = mapsOffset + maps * GpuModel::kTensorMapBytes;
  }
  if (int status = state.malloc(&memory, bytes ? bytes : 1)) {
    memory = 0;
    return failure(state, status,
                   "cannot allocate the session's " + std::to_string(bytes) +
                       " bytes of device memory (activations, inputs and outputs)");
  }
  void *pinned = nullptr;
  if (int status = state.hostMalloc(&pinned, stagingBytes ? stagingBytes : 1))
    return failure(state, status, "cannot allocate pinned host memory for the copies");
  staging = static_cast<uint8_t *>(pinned);
  buffers.arena = memory;
  buffers.weights = state.weights;
  for (size_t offset : inputOffsets)
    buffers.inputs.push_back(memory + offset);
  for (size_t offset : outputOffsets)
    buffers.outputs.push_back(memory + offset);
  launches = plan.launches;
  for (const TensorInfo &input : model.inputs)
    inputBytes.push_back(input.byteSize);
  for (const TensorInfo &output : model.outputs)
    outputBytes.push_back(output.byteSize);
  symbolic = !model.symbols.empty();
  if (kiln_status_t status = buildParams(memory + mapsOffset))
    return status;
  // A symbolic plan's launches change with each run's sizes.
  return useGraph && !symbolic ? captureGraph() : nullptr;
}

kiln_status_t GpuDevice::wait() {
  if (!queued)
    return nullptr;
  queued = false;
  Current current(state);
  if (int status = state.streamSynchronize(stream)) {
    broken = "a kernel failed: " + state.describeError(status) +
             "; the GPU context cannot recover, so this session cannot run again";
    return makeStatus(KILN_STATUS_INTERNAL, "%s: %s", state.name.c_str(), broken.c_str());
  }
  for (size_t i = 0; i < model.outputs.size(); ++i)
    memcpy(pending[i], staging + outputStaging[i], outputBytes[i]);
  float milliseconds = 0;
  if (int status = state.eventElapsed(&milliseconds, started, finished))
    return failure(state, status, "cannot time the run");
  lastMilliseconds = milliseconds;
  profile.clear();
  for (size_t i = 0; i < marks.size(); ++i) {
    Handle end = i + 1 < marks.size() ? marks[i + 1] : finished;
    if (int status = state.eventElapsed(&milliseconds, marks[i], end))
      return failure(state, status, "cannot time a kernel");
    profile.push_back(milliseconds);
  }
  return nullptr;
}

/// `tensor`'s bytes at a run's `symbols` (which the session checked it has).
size_t bytesAt(const TensorInfo &tensor, const std::vector<int64_t> &symbols) {
  if (!tensor.symbolic())
    return tensor.byteSize;
  size_t bytes = kiln_dtype_size(tensor.dtype);
  for (const std::vector<int64_t> &dim : tensor.dims)
    bytes *= size_t(format::evaluateDim({dim.data(), dim.size()}, symbols).value_or(0));
  return bytes;
}

kiln_status_t GpuDevice::enqueue(const std::vector<const void *> &inputs,
                                 const std::vector<void *> &outputs,
                                 const std::vector<int64_t> &symbols) {
  if (kiln_status_t status = wait())
    return status;
  if (!broken.empty())
    return makeStatus(KILN_STATUS_INTERNAL, "%s: %s", state.name.c_str(), broken.c_str());
  if (symbolic) {
    const Plan &plan = *state.plan;
    for (size_t i = 0; i < launches.size(); ++i)
      if (kiln_status_t status = evaluateLaunch(plan.launches[i], i, symbols, launches[i]))
        return status;
    updateParams(launches, buffers, params);
    for (size_t i = 0; i < model.inputs.size(); ++i)
      inputBytes[i] = bytesAt(model.inputs[i], symbols);
    for (size_t i = 0; i < model.outputs.size(); ++i)
      outputBytes[i] = bytesAt(model.outputs[i], symbols);
  }
  Current current(state);
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    uint8_t *staged = staging + inputStaging[i];
    memcpy(staged, inputs[i], inputBytes[i]);
    if (int status = state.copyToDeviceAsync(buffers.inputs[i], staged, inputBytes[i], stream))
      return failure(state, status, "cannot copy an input to the GPU");
  }
  if (int status = state.eventRecord(started, stream))
    return failure(state, status, "cannot record an event");
  if (graph) {
    if (int status = state.graphLaunch(graph, stream))
      return failure(state, status, "cannot launch the plan's graph");
  } else if (kiln_status_t status = launchAll()) {
    return status;
  }
  if (int status = state.eventRecord(finished, stream))
    return failure(state, status, "cannot record an event");
  for (size_t i = 0; i < model.outputs.size(); ++i)
    if (int status = state.copyToHostAsync(staging + outputStaging[i], buffers.outputs[i],
                                           outputBytes[i], stream))
      return failure(state, status, "cannot copy an output from the GPU");
  pending = outputs;
  queued = true;
  return nullptr;
}

} // namespace

kiln_status_t openGpuDevice(GpuModel &state, const kiln_model_t &model,
                            const DeviceOptions &options, std::unique_ptr<Device> &out) {
  auto device = std::unique_ptr<GpuDevice>(new (std::nothrow) GpuDevice(state, model));
  if (!device)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (kiln_status_t status = device->setUp(options.useGraph && !options.profile, options.profile))
    return status;
  out = std::move(device);
  return nullptr;
}

kiln_status_t openNamedGpu(kiln_model_t *model, const char *name, const char *prefix,
                           const std::function<std::string()> &driverError,
                           const std::function<std::unique_ptr<GpuModel>(int)> &create,
                           const DeviceOptions &options, std::unique_ptr<Device> &out) {
  size_t length = strlen(prefix);
  const char *number = name + length;
  char *end = nullptr;
  long ordinal = *number ? strtol(number + 1, &end, 10) : 0;
  if (*number && (end == number + 1 || *end != '\0' || ordinal < 0 || ordinal > 1024))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "device '%s': expected %s:N, N the GPU's number from 0", name, prefix);
  std::string gpu = std::string(prefix) + ":" + std::to_string(ordinal);
  std::string error = driverError();
  if (!error.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "device '%s' is not available: %s", gpu.c_str(),
                      error.c_str());
  GpuModel *state = nullptr;
  if (kiln_status_t status = openGpuModel(
          *model, gpu, [&] { return create(int(ordinal)); }, &state))
    return status;
  return openGpuDevice(*state, *model, options, out);
}

} // namespace kiln::gpu
