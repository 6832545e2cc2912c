// The CUDA device, through the driver API opened with dlopen. Declares the
// few driver types and entry points it uses itself, so the runtime builds
// without CUDA's headers.

#include "Cuda.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <new>

namespace kiln::cuda {

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUevent = struct CUevent_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;
constexpr int kMaxDynamicSharedBytes = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferBytes = 6;
constexpr unsigned kStreamNonBlocking = 1;
constexpr int kCaptureThreadLocal = 1;

/// CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};
constexpr int kTensorMapFloat32 = 7;          // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
constexpr int kTensorMapL2Promotion256 = 3;   // CU_TENSOR_MAP_L2_PROMOTION_L2_256B

/// The driver entry points kiln calls, by their versioned symbol names.
struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*primaryCtxRelease)(CUdevice);
  CUresult (*ctxPushCurrent)(CUcontext);
  CUresult (*ctxPopCurrent)(CUcontext *);
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*funcSetAttribute)(CUfunction, int, int);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memAllocHost)(void **, size_t);
  CUresult (*memFreeHost)(void *);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamDestroy)(CUstream);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, CUstream, void **, void **);
  CUresult (*streamBeginCapture)(CUstream, int);
  CUresult (*streamEndCapture)(CUstream, CUgraph *);
  CUresult (*graphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*graphLaunch)(CUgraphExec, CUstream);
  CUresult (*graphExecDestroy)(CUgraphExec);
  CUresult (*graphDestroy)(CUgraph);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent);
  /// CUDA 12 and later; only plans with TMA kernels need it.
  CUresult (*tensorMapEncodeTiled)(TensorMap *, int, uint32_t, void *, const uint64_t *,
                                   const uint64_t *, const uint32_t *, const uint32_t *, int, int,
                                   int, int);
};

/// The driver, opened and initialized once per process; or why it cannot be.
struct Loaded {
  Driver driver;
  std::string error;
};

const Loaded &loadDriver() {
  static const Loaded loaded = [] {
    Loaded result = {};
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *reason = dlerror();
      result.error = std::string("cannot open the CUDA driver (") + (reason ? reason : "libcuda.so.1") +
                     "); is an NVIDIA driver installed?";
      return result;
    }
    Driver &d = result.driver;
    bool complete = true;
    auto resolve = [&](auto &function, const char *name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      if (!function && complete) {
        complete = false;
        result.error = std::string("the CUDA driver lacks ") + name + "; it is too old for kiln";
      }
    };
    resolve(d.init, "cuInit");
    resolve(d.getErrorName, "cuGetErrorName");
    resolve(d.getErrorString, "cuGetErrorString");
    resolve(d.deviceGetCount, "cuDeviceGetCount");
    resolve(d.deviceGet, "cuDeviceGet");
    resolve(d.deviceGetAttribute, "cuDeviceGetAttribute");
    resolve(d.deviceGetName, "cuDeviceGetName");
    resolve(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(d.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    resolve(d.ctxPushCurrent, "cuCtxPushCurrent_v2");
    resolve(d.ctxPopCurrent, "cuCtxPopCurrent_v2");
    resolve(d.moduleLoadDataEx, "cuModuleLoadDataEx");
    resolve(d.moduleUnload, "cuModuleUnload");
    resolve(d.moduleGetFunction, "cuModuleGetFunction");
    resolve(d.funcSetAttribute, "cuFuncSetAttribute");
    resolve(d.memAlloc, "cuMemAlloc_v2");
    resolve(d.memFree, "cuMemFree_v2");
    resolve(d.memAllocHost, "cuMemAllocHost_v2");
    resolve(d.memFreeHost, "cuMemFreeHost");
    resolve(d.memcpyHtoD, "cuMemcpyHtoD_v2");
    resolve(d.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    resolve(d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    resolve(d.streamCreate, "cuStreamCreate");
    resolve(d.streamDestroy, "cuStreamDestroy_v2");
    resolve(d.streamSynchronize, "cuStreamSynchronize");
    resolve(d.launchKernel, "cuLaunchKernel");
    resolve(d.streamBeginCapture, "cuStreamBeginCapture_v2");
    resolve(d.streamEndCapture, "cuStreamEndCapture");
    resolve(d.graphInstantiate, "cuGraphInstantiateWithFlags");
    resolve(d.graphLaunch, "cuGraphLaunch");
    resolve(d.graphExecDestroy, "cuGraphExecDestroy");
    resolve(d.graphDestroy, "cuGraphDestroy");
    resolve(d.eventCreate, "cuEventCreate");
    resolve(d.eventDestroy, "cuEventDestroy_v2");
    resolve(d.eventRecord, "cuEventRecord");
    resolve(d.eventElapsedTime, "cuEventElapsedTime");
    d.tensorMapEncodeTiled = reinterpret_cast<decltype(d.tensorMapEncodeTiled)>(
        dlsym(library, "cuTensorMapEncodeTiled"));
    if (!complete)
      return result;
    if (CUresult status = d.init(0); status != CUDA_SUCCESS) {
      const char *text = nullptr;
      d.getErrorString(status, &text);
      result.error = std::string("the CUDA driver cannot start: ") + (text ? text : "unknown error");
    }
    return result;
  }();
  return loaded;
}

/// The driver's name and description of `status`.
std::string describeError(const Driver &d, CUresult status) {
  const char *name = nullptr, *text = nullptr;
  d.getErrorName(status, &name);
  d.getErrorString(status, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(status)) + ": " +
         (text ? text : "no description");
}

/// A status for a failed driver call, "cuda:N: what: the driver's error";
/// out of memory is RESOURCE_EXHAUSTED.
kiln_status_t failure(const Driver &d, CUresult status, int ordinal, const std::string &what) {
  return makeStatus(status == CUDA_ERROR_OUT_OF_MEMORY ? KILN_STATUS_RESOURCE_EXHAUSTED
                                                       : KILN_STATUS_INTERNAL,
                    "cuda:%d: %s: %s", ordinal, what.c_str(), describeError(d, status).c_str());
}

/// Makes a context current for a scope.
class Current {
public:
  Current(const Driver &d, CUcontext context) : d(d) { pushed = d.ctxPushCurrent(context) == CUDA_SUCCESS; }
  ~Current() {
    CUcontext popped;
    if (pushed)
      d.ctxPopCurrent(&popped);
  }
  bool ok() const { return pushed; }

private:
  const Driver &d;
  bool pushed;
};

/// An architecture name's number and whether it is architecture-specific:
/// "sm_90a" is {90, true}; {0, false} for anything else.
std::pair<int, bool> parseArch(const std::string &target) {
  if (target.rfind("sm_", 0) != 0)
    return {0, false};
  char *end = nullptr;
  long number = strtol(target.c_str() + 3, &end, 10);
  if (end == target.c_str() + 3 || number <= 0 || number > 1000)
    return {0, false};
  bool specific = *end == 'a' || *end == 'f';
  if (*end && !(specific && end[1] == '\0'))
    return {0, false};
  return {int(number), specific};
}

/// The code that runs best on a GPU of compute capability `major`.`minor`:
/// that of the newest architecture it can run (a plan for a newer one may
/// use more of the hardware), the architecture-specific one of its own
/// first (sm_90a's wgmma before sm_90's mma.sync), as a cubin when there
/// is one it runs (built for an architecture of the same major version, no
/// newer than it), else as PTX, which the driver compiles.
const CodeObject *chooseCode(const kiln_model_t *model, int major, int minor) {
  int device = major * 10 + minor;
  const CodeObject *best = nullptr;
  int bestScore = -1;
  for (const CodeObject &code : model->code) {
    if (code.kind == CodeObject::Kind::Host)
      continue;
    auto [arch, specific] = parseArch(code.target);
    if (arch == 0 || arch > device || (specific && arch != device))
      continue;
    bool cubin = code.kind == CodeObject::Kind::Cubin;
    if (cubin && arch / 10 != major)
      continue;
    int score = 4 * arch + (specific ? 2 : 0) + (cubin ? 1 : 0);
    if (score > bestScore) {
      best = &code;
      bestScore = score;
    }
  }
  return best;
}

} // namespace

/// A model's code and weights on one device.
struct ModelState {
  const Driver *d = nullptr;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUdeviceptr weights = 0;
  const Plan *plan = nullptr;
  std::vector<CUfunction> functions; ///< one per launch of the plan
  std::string description, target;

  ~ModelState() {
    if (!context)
      return;
    {
      Current current(*d, context);
      if (weights)
        d->memFree(weights);
      if (module)
        d->moduleUnload(module);
    }
    d->primaryCtxRelease(device);
  }
};

void destroy(ModelState *state) { delete state; }

namespace {

/// The model's state on device `ordinal`, made on first use.
kiln_status_t modelState(kiln_model_t *model, const Driver &d, int ordinal, ModelState **out) {
  std::lock_guard<std::mutex> lock(model->cudaMutex);
  for (ModelState *state : model->cudaStates)
    if (state->ordinal == ordinal) {
      *out = state;
      return nullptr;
    }
  auto state = std::make_unique<ModelState>();
  state->d = &d;
  state->ordinal = ordinal;
  int count = 0;
  if (CUresult status = d.deviceGetCount(&count))
    return failure(d, status, ordinal, "cannot count the GPUs");
  if (ordinal >= count)
    return makeStatus(KILN_STATUS_UNAVAILABLE, "device 'cuda:%d' is not available: this machine has %d CUDA GPU%s",
                      ordinal, count, count == 1 ? "" : "s");
  int major = 0, minor = 0;
  char name[128] = "";
  if (CUresult status = d.deviceGet(&state->device, ordinal))
    return failure(d, status, ordinal, "cannot open the GPU");
  d.deviceGetAttribute(&major, kComputeCapabilityMajor, state->device);
  d.deviceGetAttribute(&minor, kComputeCapabilityMinor, state->device);
  d.deviceGetName(name, sizeof(name) - 1, state->device);
  const CodeObject *code = chooseCode(model, major, minor);
  if (!code)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cuda:%d (%s) is sm_%d%d, and the artifact has no code it can run (it holds "
                      "code for %s); compile with --target sm_%d%d",
                      ordinal, name, major, minor, codeTargets(*model).c_str(), major, minor);
  state->plan = &model->plans[code->plan];
  state->target = code->target;
  state->description = "cuda:" + std::to_string(ordinal) + " (" + name + ", sm_" +
                       std::to_string(major) + std::to_string(minor) + ", " +
                       (code->kind == CodeObject::Kind::Cubin ? "cubin for " : "PTX for ") +
                       code->target + ")";

  if (CUresult status = d.primaryCtxRetain(&state->context, state->device)) {
    state->context = nullptr;
    return failure(d, status, ordinal, "cannot create a context");
  }
  Current current(d, state->context);
  if (!current.ok())
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: cannot make its context current", ordinal);
  // PTX must end in a NUL for the driver; the section holds the text only.
  std::string image(reinterpret_cast<const char *>(code->data), code->size);
  char log[4096] = "";
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferBytes};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  if (CUresult status = d.moduleLoadDataEx(&state->module, image.c_str(), 2, options, values)) {
    state->module = nullptr;
    return makeStatus(KILN_STATUS_UNAVAILABLE, "cuda:%d: the driver cannot load the %s for %s: %s%s%s",
                      ordinal, code->kind == CodeObject::Kind::Cubin ? "cubin" : "PTX",
                      code->target.c_str(), describeError(d, status).c_str(), log[0] ? ": " : "", log);
  }
  for (const Launch &launch : state->plan->launches) {
    CUfunction function = nullptr;
    if (CUresult status = d.moduleGetFunction(&function, state->module, launch.kernel.c_str()))
      return makeStatus(KILN_STATUS_DATA_LOSS, "cuda:%d: the code has no kernel '%s': %s", ordinal,
                        launch.kernel.c_str(), describeError(d, status).c_str());
    if (launch.sharedBytes > 48 * 1024)
      if (CUresult status = d.funcSetAttribute(function, kMaxDynamicSharedBytes, int(launch.sharedBytes)))
        return failure(d, status, ordinal, "the GPU cannot give a kernel its shared memory");
    state->functions.push_back(function);
  }
  const Plan &plan = *state->plan;
  if (plan.weightsSize) {
    if (CUresult status = d.memAlloc(&state->weights, plan.weightsSize)) {
      state->weights = 0;
      return failure(d, status, ordinal, "cannot allocate device memory for the weights");
    }
    if (CUresult status = d.memcpyHtoD(state->weights, plan.weights, plan.weightsSize))
      return failure(d, status, ordinal, "cannot upload the weights");
  }
  *out = state.get();
  model->cudaStates.push_back(state.release());
  return nullptr;
}

size_t align(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

} // namespace

class Session {
public:
  ModelState *state = nullptr;
  const Driver *d = nullptr;
  kiln_model_t *model = nullptr;
  CUstream stream = nullptr;
  /// The arena, then each input, then each output, then the tensor maps:
  /// one allocation.
  CUdeviceptr memory = 0;
  std::vector<CUdeviceptr> inputs, outputs;
  /// Pinned host memory the copies go through, inputs then outputs.
  uint8_t *staging = nullptr;
  std::vector<size_t> inputStaging, outputStaging;
  /// Every launch's parameters, and a pointer to each.
  std::vector<uint64_t> values;
  std::vector<std::vector<void *>> params;
  CUgraphExec graph = nullptr;
  /// Recorded around the plan's kernels, for the device time of a run.
  CUevent started = nullptr, finished = nullptr;
  double kernelMilliseconds = 0;
  /// When profiling: recorded before each kernel, and each kernel's time
  /// in the last run.
  std::vector<CUevent> marks;
  std::vector<double> profile;
  /// Where the queued run's outputs go when it is waited for.
  std::vector<void *> pending;
  bool queued = false;
  /// A failed kernel leaves the context unusable: every later run fails.
  std::string broken;

  ~Session() {
    if (!state)
      return;
    Current current(*d, state->context);
    if (stream)
      d->streamSynchronize(stream);
    if (graph)
      d->graphExecDestroy(graph);
    if (started)
      d->eventDestroy(started);
    if (finished)
      d->eventDestroy(finished);
    for (CUevent mark : marks)
      d->eventDestroy(mark);
    if (stream)
      d->streamDestroy(stream);
    if (memory)
      d->memFree(memory);
    if (staging)
      d->memFreeHost(staging);
  }

  kiln_status_t launchAll() {
    const Plan &plan = *state->plan;
    for (size_t i = 0; i < plan.launches.size(); ++i) {
      const Launch &launch = plan.launches[i];
      if (!marks.empty())
        if (CUresult status = d->eventRecord(marks[i], stream))
          return failure(*d, status, state->ordinal, "cannot record an event");
      if (CUresult status = d->launchKernel(state->functions[i], launch.grid[0], launch.grid[1],
                                            launch.grid[2], launch.block[0], launch.block[1],
                                            launch.block[2], launch.sharedBytes, stream,
                                            params[i].data(), nullptr))
        return failure(*d, status, state->ordinal,
                       "cannot launch kernel " + std::to_string(i) + " (" + launch.kernel + ")");
    }
    return nullptr;
  }
};

namespace {

/// The device address of a launch argument's buffer.
CUdeviceptr addressOf(const Session &session, const LaunchArg &arg) {
  switch (arg.base) {
  case LaunchArg::Base::Input: return session.inputs[arg.index] + arg.byteOffset;
  case LaunchArg::Base::Output: return session.outputs[arg.index] + arg.byteOffset;
  case LaunchArg::Base::Arena: return session.memory + arg.byteOffset;
  case LaunchArg::Base::Weights: return session.state->weights + arg.byteOffset;
  case LaunchArg::Base::Scalar: break;
  }
  return 0;
}

/// Encodes the tensor map of `arg` (which has one) over its buffer.
CUresult encodeTensorMap(const Session &session, const LaunchArg &arg, TensorMap *map) {
  uint32_t rank = uint32_t(arg.mapDims.size());
  std::vector<uint32_t> elementStrides(rank, 1);
  // CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B and _128B are 0 to 3.
  int swizzle = arg.swizzle == 128 ? 3 : arg.swizzle == 64 ? 2 : arg.swizzle == 32 ? 1 : 0;
  void *address = reinterpret_cast<void *>(addressOf(session, arg) + arg.offset * 4);
  return session.d->tensorMapEncodeTiled(map, kTensorMapFloat32, rank, address,
                                         arg.mapDims.data(), arg.mapStrides.data(),
                                         arg.mapBox.data(), elementStrides.data(),
                                         /*interleave=*/0, swizzle, kTensorMapL2Promotion256,
                                         /*oobFill=*/0);
}

/// Lays out every launch's parameters as the lowered kernels take them: a
/// buffer as its descriptor (pointer, pointer, offset, sizes, strides), a
/// scalar as its bits (little-endian, so a narrower parameter reads the
/// low bytes), a tensor map's argument as the device address of the map,
/// encoded now that its buffer's address is known and uploaded, in the
/// order of the arguments, to `maps`.
kiln_status_t buildParams(Session &session, CUdeviceptr maps) {
  const Plan &plan = *session.state->plan;
  size_t count = 0;
  for (const Launch &launch : plan.launches)
    for (const LaunchArg &arg : launch.args)
      count += arg.base == LaunchArg::Base::Scalar || arg.tensorMap
                   ? 1
                   : 3 + arg.sizes.size() + arg.strides.size();
  session.values.reserve(count); // the pointers below stay valid
  std::vector<TensorMap> encoded;
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    std::vector<void *> &pointers = session.params.emplace_back();
    auto push = [&](uint64_t value) {
      session.values.push_back(value);
      pointers.push_back(&session.values.back());
    };
    for (const LaunchArg &arg : plan.launches[i].args) {
      if (arg.base == LaunchArg::Base::Scalar) {
        push(arg.bits);
        continue;
      }
      if (arg.tensorMap) {
        if (CUresult status = encodeTensorMap(session, arg, &encoded.emplace_back()))
          return failure(*session.d, status, session.state->ordinal,
                         "cannot encode a tensor map for kernel " + std::to_string(i) + " (" +
                             plan.launches[i].kernel + ")");
        push(maps + (encoded.size() - 1) * sizeof(TensorMap));
        continue;
      }
      CUdeviceptr address = addressOf(session, arg);
      push(address);
      push(address);
      push(uint64_t(arg.offset));
      for (int64_t size : arg.sizes)
        push(uint64_t(size));
      for (int64_t stride : arg.strides)
        push(uint64_t(stride));
    }
  }
  if (!encoded.empty())
    if (CUresult status =
            session.d->memcpyHtoD(maps, encoded.data(), encoded.size() * sizeof(TensorMap)))
      return failure(*session.d, status, session.state->ordinal, "cannot upload the tensor maps");
  return nullptr;
}

kiln_status_t setUp(Session &session, bool useGraph, bool profile) {
  const Driver &d = *session.d;
  int ordinal = session.state->ordinal;
  kiln_model_t *model = session.model;
  Current current(d, session.state->context);
  if (!current.ok())
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: cannot make its context current", ordinal);
  if (CUresult status = d.streamCreate(&session.stream, kStreamNonBlocking)) {
    session.stream = nullptr;
    return failure(d, status, ordinal, "cannot create a stream");
  }
  std::vector<CUevent *> events = {&session.started, &session.finished};
  if (profile) {
    session.marks.resize(session.state->plan->launches.size());
    for (CUevent &mark : session.marks)
      events.push_back(&mark);
  }
  for (CUevent *event : events)
    if (CUresult status = d.eventCreate(event, 0)) {
      *event = nullptr;
      return failure(d, status, ordinal, "cannot create an event");
    }
  // One allocation: the arena, then the inputs and outputs, 256-byte aligned.
  size_t bytes = align(session.state->plan->arenaBytes, 256);
  std::vector<size_t> inputOffsets, outputOffsets;
  size_t stagingBytes = 0;
  for (const TensorInfo &input : model->inputs) {
    inputOffsets.push_back(bytes);
    bytes = align(bytes + input.byteSize, 256);
    session.inputStaging.push_back(stagingBytes);
    stagingBytes = align(stagingBytes + input.byteSize, 64);
  }
  for (const TensorInfo &output : model->outputs) {
    outputOffsets.push_back(bytes);
    bytes = align(bytes + output.byteSize, 256);
    session.outputStaging.push_back(stagingBytes);
    stagingBytes = align(stagingBytes + output.byteSize, 64);
  }
  size_t mapsOffset = align(bytes, sizeof(TensorMap));
  size_t numMaps = 0;
  for (const Launch &launch : session.state->plan->launches)
    numMaps += std::count_if(launch.args.begin(), launch.args.end(),
                             [](const LaunchArg &arg) { return arg.tensorMap; });
  if (numMaps && !d.tensorMapEncodeTiled)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cuda:%d: the plan's kernels copy with TMA, and the CUDA driver cannot "
                      "encode tensor maps (cuTensorMapEncodeTiled, CUDA 12 and later)",
                      ordinal);
  if (numMaps)
    bytes = mapsOffset + numMaps * sizeof(TensorMap);
  if (CUresult status = d.memAlloc(&session.memory, bytes ? bytes : 1)) {
    session.memory = 0;
    return failure(d, status, ordinal,
                   "cannot allocate the session's " + std::to_string(bytes) +
                       " bytes of device memory (activations, inputs and outputs)");
  }
  void *staging = nullptr;
  if (CUresult status = d.memAllocHost(&staging, stagingBytes ? stagingBytes : 1))
    return failure(d, status, ordinal, "cannot allocate pinned host memory for the copies");
  session.staging = static_cast<uint8_t *>(staging);
  for (size_t offset : inputOffsets)
    session.inputs.push_back(session.memory + offset);
  for (size_t offset : outputOffsets)
    session.outputs.push_back(session.memory + offset);
  if (kiln_status_t status = buildParams(session, session.memory + mapsOffset))
    return status;
  if (!useGraph)
    return nullptr;

  // The plan never changes: capture it once, replay it every run.
  if (CUresult status = d.streamBeginCapture(session.stream, kCaptureThreadLocal))
    return failure(d, status, ordinal, "cannot capture the plan as a CUDA graph");
  kiln_status_t launched = session.launchAll();
  CUgraph graph = nullptr;
  CUresult ended = d.streamEndCapture(session.stream, &graph);
  if (launched) {
    if (graph)
      d.graphDestroy(graph);
    return launched;
  }
  if (ended)
    return failure(d, ended, ordinal, "cannot capture the plan as a CUDA graph");
  CUresult instantiated = d.graphInstantiate(&session.graph, graph, 0);
  d.graphDestroy(graph);
  if (instantiated) {
    session.graph = nullptr;
    return failure(d, instantiated, ordinal, "cannot instantiate the plan's CUDA graph");
  }
  return nullptr;
}

} // namespace

kiln_status_t createSession(kiln_model_t *model, int ordinal, bool useGraph, bool profile,
                            Session **out) {
  const Loaded &loaded = loadDriver();
  if (!loaded.error.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "device 'cuda:%d' is not available: %s", ordinal,
                      loaded.error.c_str());
  ModelState *state = nullptr;
  if (kiln_status_t status = modelState(model, loaded.driver, ordinal, &state))
    return status;
  auto session = std::unique_ptr<Session>(new (std::nothrow) Session);
  if (!session)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  session->state = state;
  session->d = &loaded.driver;
  session->model = model;
  if (kiln_status_t status = setUp(*session, useGraph && !profile, profile))
    return status;
  *out = session.release();
  return nullptr;
}

void destroySession(Session *session) { delete session; }

const char *describe(const Session *session) { return session->state->description.c_str(); }

const char *target(const Session *session) { return session->state->target.c_str(); }

kiln_status_t wait(Session *session) {
  if (!session->queued)
    return nullptr;
  const Driver &d = *session->d;
  session->queued = false;
  Current current(d, session->state->context);
  if (CUresult status = d.streamSynchronize(session->stream)) {
    session->broken = "a kernel failed: " + describeError(d, status) +
                      "; the GPU context cannot recover, so this session cannot run again";
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: %s", session->state->ordinal,
                      session->broken.c_str());
  }
  const kiln_model_t *model = session->model;
  for (size_t i = 0; i < model->outputs.size(); ++i)
    memcpy(session->pending[i], session->staging + session->outputStaging[i],
           model->outputs[i].byteSize);
  float milliseconds = 0;
  if (CUresult status = d.eventElapsedTime(&milliseconds, session->started, session->finished))
    return failure(d, status, session->state->ordinal, "cannot time the run");
  session->kernelMilliseconds = milliseconds;
  session->profile.clear();
  for (size_t i = 0; i < session->marks.size(); ++i) {
    CUevent end = i + 1 < session->marks.size() ? session->marks[i + 1] : session->finished;
    if (CUresult status = d.eventElapsedTime(&milliseconds, session->marks[i], end))
      return failure(d, status, session->state->ordinal, "cannot time a kernel");
    session->profile.push_back(milliseconds);
  }
  return nullptr;
}

double kernelMilliseconds(const Session *session) { return session->kernelMilliseconds; }

size_t kernelProfile(const Session *session, double *milliseconds, size_t count) {
  std::copy_n(session->profile.begin(), std::min(count, session->profile.size()), milliseconds);
  return session->profile.size();
}

kiln_status_t enqueue(Session *session, const std::vector<const void *> &inputs,
                      const std::vector<void *> &outputs) {
  if (kiln_status_t status = wait(session))
    return status;
  if (!session->broken.empty())
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: %s", session->state->ordinal,
                      session->broken.c_str());
  const Driver &d = *session->d;
  const kiln_model_t *model = session->model;
  int ordinal = session->state->ordinal;
  Current current(d, session->state->context);
  for (size_t i = 0; i < model->inputs.size(); ++i) {
    uint8_t *staged = session->staging + session->inputStaging[i];
    memcpy(staged, inputs[i], model->inputs[i].byteSize);
    if (CUresult status = d.memcpyHtoDAsync(session->inputs[i], staged, model->inputs[i].byteSize,
                                            session->stream))
      return failure(d, status, ordinal, "cannot copy an input to the GPU");
  }
  if (CUresult status = d.eventRecord(session->started, session->stream))
    return failure(d, status, ordinal, "cannot record an event");
  if (session->graph) {
    if (CUresult status = d.graphLaunch(session->graph, session->stream))
      return failure(d, status, ordinal, "cannot launch the plan's CUDA graph");
  } else if (kiln_status_t status = session->launchAll()) {
    return status;
  }
  if (CUresult status = d.eventRecord(session->finished, session->stream))
    return failure(d, status, ordinal, "cannot record an event");
  for (size_t i = 0; i < model->outputs.size(); ++i)
    if (CUresult status = d.memcpyDtoHAsync(session->staging + session->outputStaging[i],
                                            session->outputs[i], model->outputs[i].byteSize,
                                            session->stream))
      return failure(d, status, ordinal, "cannot copy an output from the GPU");
  session->pending = outputs;
  session->queued = true;
  return nullptr;
}

} // namespace kiln::cuda
