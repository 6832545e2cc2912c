// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A stand-in for the CUDA driver (built as libcuda.so.1), so the runtime's
// CUDA device is tested on machines without a GPU (FakeGpu.h: memory,
// launches, graphs, events). Each pointer parameter the PTX declares
// (`.param .u64 .ptr`) must point into device memory. Tests steer it
// through kiln_fake_cuda_set and read its counters through
// kiln_fake_cuda_get.

#include "FakeGpu.h"

#include "runtime/src/cuda/DynamicSymbols.h"

#include <cstdio>
#include <deque>

using namespace kiln::cuda;

namespace {

constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidImage = 200,
                   kNotFound = 500, kIllegalAddress = 700, kInvalidDevice = 101;

using fake::Kernel;

std::map<std::string, long> defaults() { return {{"devices", 1}, {"cc", 90}}; }
const bool initialized = (fake::reset(defaults()), true);

struct Module {
  bool ptx = false;
  std::deque<Kernel> kernels; ///< handed out by address: never moved
  /// The plan record global's bytes ("device memory" once looked up);
  /// empty when the image has none.
  std::string record;
};

/// The bytes of a PTX image's plan record global, as the code generator
/// writes it: `.b8 kiln_plan_record[N] = {b0,b1,...};`.
std::string ptxRecord(const char *text) {
  const char *at = strstr(text, ".b8 kiln_plan_record[");
  const char *open = at ? strstr(at, "= {") : nullptr;
  std::string bytes;
  if (!open)
    return bytes;
  for (const char *c = open + 3; *c && *c != '}';) {
    char *end = nullptr;
    long value = strtol(c, &end, 10);
    if (end == c)
      return std::string();
    bytes += char(value);
    c = *end == ',' ? end + 1 : end;
  }
  return bytes;
}

Module *moduleOf(CUmodule module) { return reinterpret_cast<Module *>(module); }

/// Parses the kernels of a PTX image and which parameters are pointers.
Module parsePtx(const char *text) {
  Module module;
  const char *at = text;
  while ((at = strstr(at, ".entry "))) {
    at += 7;
    const char *open = strchr(at, '(');
    const char *close = open ? strchr(open, ')') : nullptr;
    if (!close)
      break;
    Kernel kernel;
    kernel.name.assign(at, open);
    while (!kernel.name.empty() && kernel.name.back() == ' ')
      kernel.name.pop_back();
    std::string params(open, close);
    for (size_t line = 0; (line = params.find(".param", line)) != std::string::npos; ++line) {
      size_t end = params.find(',', line);
      kernel.pointers.push_back(params.substr(line, end - line).find(".ptr") != std::string::npos);
    }
    module.kernels.push_back(kernel);
    at = close;
  }
  return module;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) void kiln_fake_cuda_set(const char *key, long value) {
  fake::set(key, value, defaults());
}

__attribute__((visibility("default"))) long kiln_fake_cuda_get(const char *key) {
  return fake::get(key);
}

#define API __attribute__((visibility("default"))) CUresult

// Every entry point the runtime resolves, with its signature there: a
// definition below that differs does not compile, and one left out is the
// one the runtime reports the driver lacks, which fails every CUDA test.
#define KILN_CUDA_SYMBOL(member, symbol, result, parameters)                                       \
  __attribute__((visibility("default"))) result symbol parameters;
#include "runtime/src/cuda/DynamicSymbolTables.h"

API cuInit(unsigned) { return kSuccess; }

API cuGetErrorName(CUresult status, const char **name) {
  switch (status) {
  case kInvalidValue:
    *name = "CUDA_ERROR_INVALID_VALUE";
    break;
  case kOutOfMemory:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    break;
  case kIllegalAddress:
    *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
    break;
  case 719:
    *name = "CUDA_ERROR_LAUNCH_FAILED";
    break;
  default:
    *name = "CUDA_ERROR_UNKNOWN";
    break;
  }
  return kSuccess;
}

API cuGetErrorString(CUresult status, const char **text) {
  *text = status == kOutOfMemory ? "out of memory" : "an error the fake driver made";
  return kSuccess;
}

API cuDeviceGetCount(int *count) {
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  *count = int(fake::gpu().settings["devices"]);
  return kSuccess;
}

API cuDeviceGet(CUdevice *device, int ordinal) {
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  *device = ordinal;
  return ordinal < fake::gpu().settings["devices"] ? kSuccess : kInvalidDevice;
}

API cuDeviceGetAttribute(int *value, int attribute, CUdevice) {
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  long cc = fake::gpu().settings["cc"];
  *value = attribute == 75 ? int(cc / 10) : attribute == 76 ? int(cc % 10) : 0;
  return kSuccess;
}

API cuDeviceGetName(char *name, int length, CUdevice) {
  snprintf(name, size_t(length), "Fake GPU");
  return kSuccess;
}

API cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  static int token;
  *context = reinterpret_cast<CUcontext>(&token);
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  ++fake::gpu().counters["contexts"];
  return kSuccess;
}

API cuDevicePrimaryCtxRelease_v2(CUdevice) {
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  --fake::gpu().counters["contexts"];
  return kSuccess;
}

API cuCtxPushCurrent_v2(CUcontext) { return kSuccess; }
API cuCtxPopCurrent_v2(CUcontext *) { return kSuccess; }

API cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned, int *, void **) {
  const char *text = static_cast<const char *>(image);
  auto *loaded = new Module;
  const char *kind;
  if (memcmp(text,
             "\x7f"
             "ELF",
             4) == 0) {
    loaded->record = fake::elfRecord(text);
    kind = "cubins loaded";
  } else if (strstr(text, ".version")) {
    *loaded = parsePtx(text);
    loaded->ptx = true;
    loaded->record = ptxRecord(text);
    kind = "ptx loaded";
  } else {
    delete loaded;
    return kInvalidImage;
  }
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  ++fake::gpu().counters[kind];
  ++fake::gpu().counters["modules"];
  *module = reinterpret_cast<CUmodule>(loaded);
  return kSuccess;
}

API cuModuleUnload(CUmodule module) {
  fake::unmapGlobal(moduleOf(module)->record);
  delete moduleOf(module);
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  --fake::gpu().counters["modules"];
  return kSuccess;
}

API cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  Module *loaded = moduleOf(module);
  for (Kernel &kernel : loaded->kernels)
    if (kernel.name == name) {
      *function = reinterpret_cast<CUfunction>(&kernel);
      return kSuccess;
    }
  if (loaded->ptx)
    return kNotFound;
  // A cubin's kernels are not parsed: each name gets an unchecked kernel.
  loaded->kernels.push_back({name, {}});
  *function = reinterpret_cast<CUfunction>(&loaded->kernels.back());
  return kSuccess;
}

API cuModuleGetGlobal_v2(CUdeviceptr *address, size_t *bytes, CUmodule module, const char *name) {
  Module *loaded = moduleOf(module);
  if (strcmp(name, "kiln_plan_record") != 0 || loaded->record.empty())
    return kNotFound;
  *address = uintptr_t(loaded->record.data());
  *bytes = loaded->record.size();
  fake::mapGlobal(loaded->record);
  return kSuccess;
}

API cuFuncSetAttribute(CUfunction, int, int) { return kSuccess; }

API cuMemAlloc_v2(CUdeviceptr *address, size_t bytes) {
  uint64_t at = 0;
  bool allocated = fake::allocate(&at, bytes);
  *address = at;
  return allocated ? kSuccess : kOutOfMemory;
}

API cuMemFree_v2(CUdeviceptr address) { return fake::release(address) ? kSuccess : kInvalidValue; }

API cuMemAllocHost_v2(void **memory, size_t bytes) {
  *memory = malloc(bytes ? bytes : 1);
  return *memory ? kSuccess : kOutOfMemory;
}

API cuMemFreeHost(void *memory) {
  free(memory);
  return kSuccess;
}

API cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t bytes) {
  return fake::copyToDevice(to, from, bytes, true) ? kSuccess : kInvalidValue;
}

API cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void *from, size_t bytes, CUstream) {
  return fake::copyToDevice(to, from, bytes, false) ? kSuccess : kInvalidValue;
}

API cuMemcpyDtoH_v2(void *to, CUdeviceptr from, size_t bytes) {
  return fake::copyToHost(to, from, bytes) ? kSuccess : kInvalidValue;
}

API cuMemcpyDtoHAsync_v2(void *to, CUdeviceptr from, size_t bytes, CUstream) {
  return fake::copyToHost(to, from, bytes) ? kSuccess : kInvalidValue;
}

API cuStreamCreate(CUstream *stream, unsigned) {
  static int token;
  *stream = reinterpret_cast<CUstream>(&token);
  return kSuccess;
}

API cuStreamDestroy_v2(CUstream) { return kSuccess; }

API cuStreamSynchronize(CUstream) { return fake::synchronize(); }

API cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned,
                   unsigned, unsigned, unsigned, CUstream, void **params, void **) {
  if (!gridX || !gridY || !gridZ) {
    std::lock_guard<std::mutex> lock(fake::gpu().mutex);
    ++fake::gpu().counters["bad launches"];
    return kInvalidValue;
  }
  fake::launch(reinterpret_cast<Kernel *>(function), params, kIllegalAddress,
               long(gridX) * gridY * gridZ);
  return kSuccess;
}

API cuStreamBeginCapture_v2(CUstream, int) {
  fake::beginCapture();
  return kSuccess;
}

API cuStreamEndCapture(CUstream, CUgraph *graph) {
  *graph = static_cast<CUgraph>(fake::endCapture());
  return kSuccess;
}

API cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long) {
  *exec = static_cast<CUgraphExec>(fake::instantiate(graph));
  return kSuccess;
}

API cuGraphLaunch(CUgraphExec exec, CUstream) {
  fake::launchGraph(exec, kIllegalAddress);
  return kSuccess;
}

API cuGraphExecDestroy(CUgraphExec exec) {
  fake::destroyGraph(exec, false);
  return kSuccess;
}

API cuGraphDestroy(CUgraph graph) {
  fake::destroyGraph(graph, true);
  return kSuccess;
}

/// Checks what the driver documents (cuda.h): f32 elements, 1 to 5
/// dimensions, a 16-byte aligned address whose every mapped element is in
/// one allocation, strides multiples of 16 bytes, box extents of 1 to 256
/// with rows of a multiple of 16 bytes within the swizzle span. The map
/// holds the magic, the address and the rank.
API cuTensorMapEncodeTiled(TensorMap *tensorMap, int type, uint32_t rank, void *address,
                           const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                           const uint32_t *elementStrides, int interleave, int swizzle, int, int) {
  uint64_t *map = tensorMap->opaque;
  fake::Gpu &f = fake::gpu();
  std::lock_guard<std::mutex> lock(f.mutex);
  uint64_t at = reinterpret_cast<uint64_t>(address);
  bool valid = reinterpret_cast<uintptr_t>(map) % 64 == 0 && type == 7 && rank >= 1 && rank <= 5 &&
               at % 16 == 0 && interleave == 0 && swizzle >= 0 && swizzle <= 3;
  uint64_t last = 0;
  for (uint32_t i = 0; valid && i < rank; ++i) {
    uint64_t stride = i ? strides[i - 1] : 4;
    valid = dims[i] >= 1 && box[i] >= 1 && box[i] <= 256 && elementStrides[i] == 1 &&
            (i == 0 || (stride % 16 == 0 && stride < (uint64_t(1) << 40)));
    last += (dims[i] - 1) * stride;
  }
  uint64_t rowBytes = uint64_t(box[0]) * 4;
  valid = valid && rowBytes % 16 == 0 && (swizzle == 0 || rowBytes <= (uint64_t(16) << swizzle)) &&
          fake::inDeviceMemory(f, at, last + 4);
  if (!valid || f.settings["fail tensor maps"])
    return kInvalidValue;
  memset(map, 0, 128);
  map[0] = fake::kTensorMapMagic;
  map[1] = at;
  map[2] = rank;
  ++f.counters["tensor maps"];
  return kSuccess;
}

API cuEventCreate(CUevent *event, unsigned) {
  *event = static_cast<CUevent>(fake::createEvent());
  return kSuccess;
}

API cuEventDestroy_v2(CUevent event) {
  fake::destroyEvent(event);
  return kSuccess;
}

API cuEventRecord(CUevent event, CUstream) {
  fake::recordEvent(event);
  return kSuccess;
}

API cuEventElapsedTime(float *milliseconds, CUevent start, CUevent end) {
  *milliseconds = fake::elapsed(start, end);
  return kSuccess;
}

} // extern "C"
