// A stand-in for the CUDA driver (built as libcuda.so.1), so the runtime's
// CUDA device is tested on machines without a GPU. Device memory is host
// memory; kernels do not run, but every launch is checked: each pointer
// parameter the PTX declares (`.param .u64 .ptr`) must point into device
// memory, as it would have to on a GPU. Tests steer it through
// kiln_fake_cuda_set and read its counters through kiln_fake_cuda_get.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidImage = 200,
                   kNotFound = 500, kIllegalAddress = 700, kInvalidDevice = 101;

struct Kernel {
  std::string name;
  /// Whether each parameter is a pointer; empty when the image is not PTX.
  std::vector<bool> pointers;
};

struct Module {
  bool ptx = false;
  std::deque<Kernel> kernels; ///< handed out by address: never moved
  /// The plan record global's bytes ("device memory" once looked up);
  /// empty when the image has none.
  std::string record;
};

struct Recorded {
  Kernel *kernel;
  std::vector<uint64_t> params;
};

struct Fake {
  std::mutex mutex;
  std::map<std::string, long> settings = {{"devices", 1}, {"cc", 90}, {"memory", 1L << 40}};
  std::map<std::string, long> counters;
  std::map<uintptr_t, size_t> allocations;
  long allocated = 0;
  /// The error a failed kernel leaves behind, reported by every sync after.
  CUresult sticky = kSuccess;
  bool capturing = false;
  std::vector<Recorded> captured;
};

Fake &fake() {
  static Fake instance;
  return instance;
}

bool inDeviceMemory(Fake &f, uint64_t address, size_t bytes) {
  auto it = f.allocations.upper_bound(address);
  if (it == f.allocations.begin())
    return false;
  --it;
  return address >= it->first && address + bytes <= it->first + it->second;
}

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

/// The bytes of a cubin's plan record global: its initial value lies in
/// the ELF file as it is, from the record's first line to its NUL. The
/// file's size comes from its header (section headers come last).
std::string cubinRecord(const char *image) {
  uint64_t sectionsAt;
  uint16_t entrySize, entries;
  memcpy(&sectionsAt, image + 0x28, 8);
  memcpy(&entrySize, image + 0x3a, 2);
  memcpy(&entries, image + 0x3c, 2);
  size_t size = sectionsAt + size_t(entrySize) * entries;
  static const char first[] = "kiln plan record ";
  const void *at = memmem(image, size, first, sizeof(first) - 1);
  if (!at)
    return std::string();
  const char *start = static_cast<const char *>(at);
  const void *nul = memchr(start, 0, image + size - start);
  return nul ? std::string(start, static_cast<const char *>(nul) + 1) : std::string();
}

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

/// What the fake's tensor maps start with: "KILNTMAP".
constexpr uint64_t kTensorMapMagic = 0x50414d544e4c494bull;

/// Checks a launch's pointers as a GPU would find out at run time, and
/// counts the parameters that are addresses of tensor maps in device
/// memory.
void execute(Fake &f, const Recorded &launch) {
  ++f.counters["kernels run"];
  for (size_t i = 0; i < launch.kernel->pointers.size(); ++i) {
    uint64_t value = launch.params[i];
    if (launch.kernel->pointers[i] && !inDeviceMemory(f, value, 1)) {
      f.sticky = kIllegalAddress;
      ++f.counters["bad pointers"];
    }
    if (!launch.kernel->pointers[i] && value % 64 == 0 && inDeviceMemory(f, value, 128) &&
        *reinterpret_cast<const uint64_t *>(value) == kTensorMapMagic)
      ++f.counters["tensor maps read"];
  }
  if (long failure = f.settings["fail kernels"])
    f.sticky = CUresult(failure);
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) void kiln_fake_cuda_set(const char *key, long value) {
  std::lock_guard<std::mutex> lock(fake().mutex);
  fake().settings[key] = value;
  if (std::string(key) == "reset") {
    fake().counters.clear();
    fake().sticky = kSuccess;
  }
}

__attribute__((visibility("default"))) long kiln_fake_cuda_get(const char *key) {
  std::lock_guard<std::mutex> lock(fake().mutex);
  return fake().counters[key];
}

#define API __attribute__((visibility("default"))) CUresult

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
  *count = int(fake().settings["devices"]);
  return kSuccess;
}

API cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal < fake().settings["devices"] ? kSuccess : kInvalidDevice;
}

API cuDeviceGetAttribute(int *value, int attribute, int) {
  long cc = fake().settings["cc"];
  *value = attribute == 75 ? int(cc / 10) : attribute == 76 ? int(cc % 10) : 0;
  return kSuccess;
}

API cuDeviceGetName(char *name, int length, int) {
  snprintf(name, size_t(length), "Fake GPU");
  return kSuccess;
}

API cuDevicePrimaryCtxRetain(void **context, int) {
  static int token;
  *context = &token;
  ++fake().counters["contexts"];
  return kSuccess;
}

API cuDevicePrimaryCtxRelease_v2(int) {
  --fake().counters["contexts"];
  return kSuccess;
}

API cuCtxPushCurrent_v2(void *) { return kSuccess; }
API cuCtxPopCurrent_v2(void **) { return kSuccess; }

API cuModuleLoadDataEx(void **module, const void *image, unsigned, int *, void **) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  const char *text = static_cast<const char *>(image);
  auto *loaded = new Module;
  if (memcmp(text,
             "\x7f"
             "ELF",
             4) == 0) {
    loaded->record = cubinRecord(text);
    ++f.counters["cubins loaded"];
  } else if (strstr(text, ".version")) {
    *loaded = parsePtx(text);
    loaded->ptx = true;
    loaded->record = ptxRecord(text);
    ++f.counters["ptx loaded"];
  } else {
    delete loaded;
    return kInvalidImage;
  }
  ++f.counters["modules"];
  *module = loaded;
  return kSuccess;
}

API cuModuleUnload(void *module) {
  {
    Fake &f = fake();
    std::lock_guard<std::mutex> lock(f.mutex);
    f.allocations.erase(uintptr_t(static_cast<Module *>(module)->record.data()));
  }
  delete static_cast<Module *>(module);
  --fake().counters["modules"];
  return kSuccess;
}

API cuModuleGetFunction(void **function, void *module, const char *name) {
  Module *loaded = static_cast<Module *>(module);
  for (Kernel &kernel : loaded->kernels)
    if (kernel.name == name) {
      *function = &kernel;
      return kSuccess;
    }
  if (loaded->ptx)
    return kNotFound;
  // A cubin's kernels are not parsed: each name gets an unchecked kernel.
  loaded->kernels.push_back({name, {}});
  *function = &loaded->kernels.back();
  return kSuccess;
}

API cuFuncSetAttribute(void *, int, int) { return kSuccess; }

API cuMemAlloc_v2(uint64_t *address, size_t bytes) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (f.allocated + long(bytes) > f.settings["memory"])
    return kOutOfMemory;
  // As the driver's, 256-byte aligned.
  size_t rounded = (bytes + 255) / 256 * 256;
  void *memory = aligned_alloc(256, rounded ? rounded : 256);
  if (!memory)
    return kOutOfMemory;
  memset(memory, 0, rounded ? rounded : 256);
  f.allocated += long(bytes);
  f.allocations[uintptr_t(memory)] = bytes;
  ++f.counters["allocations"];
  *address = uintptr_t(memory);
  return kSuccess;
}

API cuMemFree_v2(uint64_t address) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  auto it = f.allocations.find(address);
  if (it == f.allocations.end())
    return kInvalidValue;
  f.allocated -= long(it->second);
  f.allocations.erase(it);
  --f.counters["allocations"];
  free(reinterpret_cast<void *>(address));
  return kSuccess;
}

API cuMemAllocHost_v2(void **memory, size_t bytes) {
  *memory = malloc(bytes ? bytes : 1);
  return *memory ? kSuccess : kOutOfMemory;
}

API cuMemFreeHost(void *memory) {
  free(memory);
  return kSuccess;
}

API cuMemcpyHtoD_v2(uint64_t to, const void *from, size_t bytes) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!inDeviceMemory(f, to, bytes))
    return kInvalidValue;
  memcpy(reinterpret_cast<void *>(to), from, bytes);
  ++f.counters["uploads"];
  return kSuccess;
}

API cuMemcpyHtoDAsync_v2(uint64_t to, const void *from, size_t bytes, void *) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!inDeviceMemory(f, to, bytes))
    return kInvalidValue;
  memcpy(reinterpret_cast<void *>(to), from, bytes);
  return kSuccess;
}

API cuModuleGetGlobal_v2(uint64_t *address, size_t *bytes, void *module, const char *name) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  Module *loaded = static_cast<Module *>(module);
  if (strcmp(name, "kiln_plan_record") != 0 || loaded->record.empty())
    return kNotFound;
  *address = uintptr_t(loaded->record.data());
  *bytes = loaded->record.size();
  f.allocations[*address] = *bytes;
  return kSuccess;
}

API cuMemcpyDtoH_v2(void *to, uint64_t from, size_t bytes) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!inDeviceMemory(f, from, bytes))
    return kInvalidValue;
  memcpy(to, reinterpret_cast<void *>(from), bytes);
  return kSuccess;
}

API cuMemcpyDtoHAsync_v2(void *to, uint64_t from, size_t bytes, void *) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!inDeviceMemory(f, from, bytes))
    return kInvalidValue;
  memcpy(to, reinterpret_cast<void *>(from), bytes);
  return kSuccess;
}

API cuStreamCreate(void **stream, unsigned) {
  static int token;
  *stream = &token;
  return kSuccess;
}

API cuStreamDestroy_v2(void *) { return kSuccess; }

API cuStreamSynchronize(void *) {
  ++fake().counters["syncs"];
  return fake().sticky;
}

API cuLaunchKernel(void *function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   unsigned, void *, void **params, void **) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  Recorded launch{static_cast<Kernel *>(function), {}};
  for (size_t i = 0; i < launch.kernel->pointers.size(); ++i)
    launch.params.push_back(*static_cast<uint64_t *>(params[i]));
  ++f.counters["launches"];
  if (f.capturing)
    f.captured.push_back(launch);
  else
    execute(f, launch);
  return kSuccess;
}

API cuStreamBeginCapture_v2(void *, int) {
  fake().capturing = true;
  fake().captured.clear();
  return kSuccess;
}

API cuStreamEndCapture(void *, void **graph) {
  Fake &f = fake();
  f.capturing = false;
  *graph = new std::vector<Recorded>(f.captured);
  ++f.counters["graphs"];
  return kSuccess;
}

API cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  *exec = new std::vector<Recorded>(*static_cast<std::vector<Recorded> *>(graph));
  return kSuccess;
}

API cuGraphLaunch(void *exec, void *) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  ++f.counters["graph launches"];
  for (const Recorded &launch : *static_cast<std::vector<Recorded> *>(exec))
    execute(f, launch);
  return kSuccess;
}

API cuGraphExecDestroy(void *exec) {
  delete static_cast<std::vector<Recorded> *>(exec);
  return kSuccess;
}

API cuGraphDestroy(void *graph) {
  delete static_cast<std::vector<Recorded> *>(graph);
  ++fake().counters["graphs destroyed"];
  return kSuccess;
}

/// Checks what the driver documents (cuda.h): f32 elements, 1 to 5
/// dimensions, a 16-byte aligned address whose every mapped element is in
/// one allocation, strides multiples of 16 bytes, box extents of 1 to 256
/// with rows of a multiple of 16 bytes within the swizzle span. The map
/// holds the magic, the address and the rank.
API cuTensorMapEncodeTiled(uint64_t *map, int type, uint32_t rank, void *address,
                           const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                           const uint32_t *elementStrides, int interleave, int swizzle, int, int) {
  Fake &f = fake();
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
          inDeviceMemory(f, at, last + 4);
  if (!valid || f.settings["fail tensor maps"])
    return kInvalidValue;
  memset(map, 0, 128);
  map[0] = kTensorMapMagic;
  map[1] = at;
  map[2] = rank;
  ++f.counters["tensor maps"];
  return kSuccess;
}

API cuEventCreate(void **event, unsigned) {
  *event = new float(0);
  return kSuccess;
}

API cuEventDestroy_v2(void *event) {
  delete static_cast<float *>(event);
  return kSuccess;
}

/// Each recorded event reads the number of kernels run so far, in
/// milliseconds: a run's time is then its kernel count.
API cuEventRecord(void *event, void *) {
  *static_cast<float *>(event) = float(fake().counters["kernels run"]);
  return kSuccess;
}

API cuEventElapsedTime(float *milliseconds, void *start, void *end) {
  *milliseconds = *static_cast<float *>(end) - *static_cast<float *>(start);
  return kSuccess;
}

} // extern "C"
