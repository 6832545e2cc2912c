// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A stand-in for the HIP runtime (built as libamdhip64.so), so the runtime's
// HIP device is tested on machines without an AMD GPU (FakeGpu.h: memory,
// launches, graphs, events). It reads what a real loader reads from a code
// object: the chip in the ELF header, which must be the GPU's, and each
// kernel's arguments from the AMDGPU metadata note (MessagePack). A launch
// is then checked as the hardware would take it: every buffer argument
// points into device memory, the kernel arguments fill the kernel's
// argument segment at their offsets, each aligned to its size, and the
// block fits the kernel's largest workgroup and the LDS. Tests steer it
// through kiln_fake_hip_set and read its counters through
// kiln_fake_hip_get.

#include "FakeGpu.h"

#include "runtime/src/hip/HipSymbols.h"

#include <cstdio>
#include <deque>
#include <memory>

using namespace kiln::hip;

namespace {

constexpr hipError_t kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNoDevice = 100,
                     kInvalidDevice = 101, kInvalidImage = 200, kNoBinaryForGpu = 209,
                     kNotFound = 500, kLaunchFailure = 719, kIllegalAddress = 700,
                     kInvalidConfiguration = 9;

/// "arch": the GPU's architecture, by its LLVM ELF machine number
/// (EF_AMDGPU_MACH): 0x4c gfx942 (the default), 0x3f gfx90a.
std::map<std::string, long> defaults() { return {{"devices", 1}, {"arch", 0x4c}}; }
const bool initialized = (fake::reset(defaults()), true);

const char *archName(long mach) {
  return mach == 0x4c ? "gfx942" : mach == 0x3f ? "gfx90a" : "gfx000";
}

// MessagePack, as much of it as the metadata note uses.
struct Value {
  enum Kind { Nil, Bool, Int, Float, String, Array, Map } kind = Nil;
  int64_t integer = 0;
  std::string text;
  std::vector<Value> items;                          ///< an array's
  std::vector<std::pair<std::string, Value>> fields; ///< a map's (string keys)

  const Value *find(const char *key) const {
    for (const auto &[name, value] : fields)
      if (name == key)
        return &value;
    return nullptr;
  }
  int64_t number(const char *key) const {
    const Value *value = find(key);
    return value && value->kind == Int ? value->integer : -1;
  }
  std::string string(const char *key) const {
    const Value *value = find(key);
    return value && value->kind == String ? value->text : "";
  }
};

class Reader {
public:
  Reader(const uint8_t *at, const uint8_t *end) : at(at), end(end) {}
  bool read(Value &out, int depth = 0) {
    if (at >= end || depth > 16)
      return false;
    uint8_t tag = *at++;
    if (tag <= 0x7f || tag >= 0xe0) {
      out.kind = Value::Int;
      out.integer = int8_t(tag);
      if (tag <= 0x7f)
        out.integer = tag;
      return true;
    }
    if ((tag & 0xf0) == 0x80)
      return map(out, tag & 0x0f, depth);
    if ((tag & 0xf0) == 0x90)
      return array(out, tag & 0x0f, depth);
    if ((tag & 0xe0) == 0xa0)
      return string(out, tag & 0x1f);
    switch (tag) {
    case 0xc0:
      out.kind = Value::Nil;
      return true;
    case 0xc2:
    case 0xc3:
      out.kind = Value::Bool;
      out.integer = tag == 0xc3;
      return true;
    case 0xca:
      out.kind = Value::Float;
      return skip(4);
    case 0xcb:
      out.kind = Value::Float;
      return skip(8);
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
      out.kind = Value::Int;
      return big(out.integer, 1 << (tag - 0xcc));
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
      out.kind = Value::Int;
      return big(out.integer, 1 << (tag - 0xd0));
    case 0xd9:
    case 0xda:
    case 0xdb: {
      int64_t length;
      return big(length, 1 << (tag - 0xd9)) && string(out, length);
    }
    case 0xdc:
    case 0xdd: {
      int64_t count;
      return big(count, tag == 0xdc ? 2 : 4) && array(out, count, depth);
    }
    case 0xde:
    case 0xdf: {
      int64_t count;
      return big(count, tag == 0xde ? 2 : 4) && map(out, count, depth);
    }
    }
    return false;
  }

private:
  bool skip(int64_t bytes) {
    if (end - at < bytes)
      return false;
    at += bytes;
    return true;
  }
  /// A big-endian integer of `bytes` bytes.
  bool big(int64_t &out, int bytes) {
    if (end - at < bytes)
      return false;
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i)
      value = value << 8 | *at++;
    out = int64_t(value);
    return true;
  }
  bool string(Value &out, int64_t length) {
    if (length < 0 || end - at < length)
      return false;
    out.kind = Value::String;
    out.text.assign(reinterpret_cast<const char *>(at), size_t(length));
    at += length;
    return true;
  }
  bool array(Value &out, int64_t count, int depth) {
    out.kind = Value::Array;
    for (int64_t i = 0; i < count; ++i)
      if (!read(out.items.emplace_back(), depth + 1))
        return false;
    return true;
  }
  bool map(Value &out, int64_t count, int depth) {
    out.kind = Value::Map;
    for (int64_t i = 0; i < count; ++i) {
      Value key;
      if (!read(key, depth + 1) || key.kind != Value::String)
        return false;
      if (!read(out.fields.emplace_back(key.text, Value()).second, depth + 1))
        return false;
    }
    return true;
  }

  const uint8_t *at, *end;
};

/// A kernel as its metadata describes it.
struct Kernel : fake::Kernel {
  struct Arg {
    int64_t offset, size;
  };
  std::vector<Arg> args; ///< the explicit ones, which the caller passes
  int64_t segmentBytes = 0, maxBlock = 0, ldsBytes = 0;
};

struct Module {
  long mach = 0;
  std::deque<Kernel> kernels; ///< handed out by address: never moved
  std::string record;         ///< the plan record global's bytes
};

/// The AMDGPU metadata note of an ELF code object, parsed; false when it
/// has none or it does not parse.
bool readMetadata(const char *image, Value &out) {
  uint64_t sectionsAt;
  uint16_t entrySize, entries;
  memcpy(&sectionsAt, image + 0x28, 8);
  memcpy(&entrySize, image + 0x3a, 2);
  memcpy(&entries, image + 0x3c, 2);
  for (uint16_t i = 0; i < entries; ++i) {
    const char *section = image + sectionsAt + size_t(i) * entrySize;
    uint32_t type;
    uint64_t offset, size;
    memcpy(&type, section + 4, 4);
    memcpy(&offset, section + 0x18, 8);
    memcpy(&size, section + 0x20, 8);
    if (type != 7) // SHT_NOTE
      continue;
    for (uint64_t at = 0; at + 12 <= size;) {
      uint32_t nameBytes, descBytes, noteType;
      memcpy(&nameBytes, image + offset + at, 4);
      memcpy(&descBytes, image + offset + at + 4, 4);
      memcpy(&noteType, image + offset + at + 8, 4);
      const char *name = image + offset + at + 12;
      const auto *desc = reinterpret_cast<const uint8_t *>(name + (nameBytes + 3) / 4 * 4);
      // NT_AMDGPU_METADATA, owner "AMDGPU".
      if (noteType == 32 && nameBytes == 7 && memcmp(name, "AMDGPU", 7) == 0)
        return Reader(desc, desc + descBytes).read(out);
      at += 12 + (nameBytes + 3) / 4 * 4 + (descBytes + 3) / 4 * 4;
    }
  }
  return false;
}

/// The module's kernels from its metadata: each explicit argument (those
/// whose kind is not hidden_*, which the runtime fills) and whether it is a
/// buffer.
bool readKernels(const Value &metadata, Module &module) {
  const Value *kernels = metadata.find("amdhsa.kernels");
  if (!kernels || kernels->kind != Value::Array)
    return false;
  for (const Value &entry : kernels->items) {
    Kernel &kernel = module.kernels.emplace_back();
    kernel.name = entry.string(".name");
    kernel.segmentBytes = entry.number(".kernarg_segment_size");
    kernel.maxBlock = entry.number(".max_flat_workgroup_size");
    kernel.ldsBytes = entry.number(".group_segment_fixed_size");
    const Value *args = entry.find(".args");
    for (const Value &arg : args ? args->items : std::vector<Value>()) {
      std::string kind = arg.string(".value_kind");
      if (kind.rfind("hidden_", 0) == 0)
        continue;
      kernel.args.push_back({arg.number(".offset"), arg.number(".size")});
      kernel.pointers.push_back(kind == "global_buffer");
    }
  }
  return true;
}

/// Checks a launch's shape and argument layout against the kernel's
/// metadata; counts what is wrong as "bad launches".
bool validLaunch(const Kernel &kernel, unsigned blockX, unsigned blockY, unsigned blockZ,
                 unsigned sharedBytes) {
  bool valid = uint64_t(blockX) * blockY * blockZ <= uint64_t(kernel.maxBlock) &&
               kernel.ldsBytes + sharedBytes <= 64 * 1024;
  int64_t end = 0;
  for (const Kernel::Arg &arg : kernel.args) {
    // kiln passes every parameter as 8 bytes (LaunchParams.h), of which a
    // narrower argument reads the low ones.
    valid =
        valid && arg.size >= 1 && arg.size <= 8 && arg.offset % arg.size == 0 && arg.offset >= end;
    end = arg.offset + arg.size;
  }
  return valid && end <= kernel.segmentBytes;
}

thread_local int currentDevice = 0;

Module *moduleOf(hipModule_t module) { return reinterpret_cast<Module *>(module); }
} // namespace

extern "C" {

__attribute__((visibility("default"))) void kiln_fake_hip_set(const char *key, long value) {
  fake::set(key, value, defaults());
}

__attribute__((visibility("default"))) long kiln_fake_hip_get(const char *key) {
  return fake::get(key);
}

#define API __attribute__((visibility("default"))) hipError_t

// Every entry point the runtime resolves, with its signature there: a
// definition below that differs does not compile, and one left out is the
// one the runtime reports the library lacks, which fails every HIP test.
#define KILN_HIP_SYMBOL(member, symbol, result, parameters)                                        \
  __attribute__((visibility("default"))) result symbol parameters;
#include "runtime/src/hip/HipSymbolTables.h"

API hipInit(unsigned) {
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  return fake::gpu().settings["devices"] ? kSuccess : kNoDevice;
}

__attribute__((visibility("default"))) const char *hipGetErrorName(hipError_t status) {
  switch (status) {
  case kOutOfMemory:
    return "hipErrorOutOfMemory";
  case kNoDevice:
    return "hipErrorNoDevice";
  case kNoBinaryForGpu:
    return "hipErrorNoBinaryForGpu";
  case kIllegalAddress:
    return "hipErrorIllegalAddress";
  case kLaunchFailure:
    return "hipErrorLaunchFailure";
  case kInvalidConfiguration:
    return "hipErrorInvalidConfiguration";
  default:
    return "hipErrorUnknown";
  }
}

__attribute__((visibility("default"))) const char *hipGetErrorString(hipError_t status) {
  return status == kOutOfMemory ? "out of memory" : "an error the fake runtime made";
}

API hipGetDeviceCount(int *count) {
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  *count = int(fake::gpu().settings["devices"]);
  return *count ? kSuccess : kNoDevice;
}

API hipGetDevice(int *device) {
  *device = currentDevice;
  return kSuccess;
}

API hipSetDevice(int device) {
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  if (device < 0 || device >= fake::gpu().settings["devices"])
    return kInvalidDevice;
  currentDevice = device;
  ++fake::gpu().counters["device switches"];
  return kSuccess;
}

/// The layout of ROCm 5's hipDeviceProp_t (ROCm 6's hipDeviceProp_tR0000),
/// as far as the name and the architecture's name.
API hipGetDeviceProperties(DeviceProperties *layout, int device) {
  char *properties = reinterpret_cast<char *>(layout);
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  if (device < 0 || device >= fake::gpu().settings["devices"])
    return kInvalidDevice;
  memset(properties, 0, 792);
  snprintf(properties, 256, "Fake AMD GPU");
  snprintf(properties + 396, 256, "%s:sramecc+:xnack-", archName(fake::gpu().settings["arch"]));
  return kSuccess;
}

API hipModuleLoadData(hipModule_t *module, const void *image) {
  const char *bytes = static_cast<const char *>(image);
  if (memcmp(bytes,
             "\x7f"
             "ELF",
             4) != 0)
    return kInvalidImage;
  auto loaded = std::make_unique<Module>();
  uint32_t flags;
  memcpy(&flags, bytes + 0x30, 4);
  loaded->mach = flags & 0xff;
  {
    std::lock_guard<std::mutex> lock(fake::gpu().mutex);
    if (loaded->mach != fake::gpu().settings["arch"])
      return kNoBinaryForGpu;
  }
  Value metadata;
  if (!readMetadata(bytes, metadata) || !readKernels(metadata, *loaded))
    return kInvalidImage;
  loaded->record = fake::elfRecord(bytes);
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  ++fake::gpu().counters["code objects loaded"];
  ++fake::gpu().counters["modules"];
  *module = reinterpret_cast<hipModule_t>(loaded.release());
  return kSuccess;
}

API hipModuleUnload(hipModule_t module) {
  fake::unmapGlobal(moduleOf(module)->record);
  delete moduleOf(module);
  std::lock_guard<std::mutex> lock(fake::gpu().mutex);
  --fake::gpu().counters["modules"];
  return kSuccess;
}

API hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name) {
  for (Kernel &kernel : moduleOf(module)->kernels)
    if (kernel.name == name) {
      *function = reinterpret_cast<hipFunction_t>(&kernel);
      return kSuccess;
    }
  return kNotFound;
}

API hipModuleGetGlobal(void **address, size_t *bytes, hipModule_t module, const char *name) {
  Module *loaded = moduleOf(module);
  if (strcmp(name, "kiln_plan_record") != 0 || loaded->record.empty())
    return kNotFound;
  *address = loaded->record.data();
  *bytes = loaded->record.size();
  fake::mapGlobal(loaded->record);
  return kSuccess;
}

API hipMalloc(void **memory, size_t bytes) {
  uint64_t address = 0;
  if (!fake::allocate(&address, bytes))
    return kOutOfMemory;
  *memory = reinterpret_cast<void *>(address);
  return kSuccess;
}

API hipFree(void *memory) {
  return fake::release(reinterpret_cast<uint64_t>(memory)) ? kSuccess : kInvalidValue;
}

API hipHostMalloc(void **memory, size_t bytes, unsigned) {
  *memory = malloc(bytes ? bytes : 1);
  return *memory ? kSuccess : kOutOfMemory;
}

API hipHostFree(void *memory) {
  free(memory);
  return kSuccess;
}

API hipMemcpyHtoD(void *to, const void *from, size_t bytes) {
  return fake::copyToDevice(reinterpret_cast<uint64_t>(to), from, bytes, true) ? kSuccess
                                                                               : kInvalidValue;
}

API hipMemcpyHtoDAsync(void *to, const void *from, size_t bytes, hipStream_t) {
  return fake::copyToDevice(reinterpret_cast<uint64_t>(to), from, bytes, false) ? kSuccess
                                                                                : kInvalidValue;
}

API hipMemcpyDtoH(void *to, void *from, size_t bytes) {
  return fake::copyToHost(to, reinterpret_cast<uint64_t>(from), bytes) ? kSuccess : kInvalidValue;
}

API hipMemcpyDtoHAsync(void *to, void *from, size_t bytes, hipStream_t) {
  return fake::copyToHost(to, reinterpret_cast<uint64_t>(from), bytes) ? kSuccess : kInvalidValue;
}

API hipStreamCreateWithFlags(hipStream_t *stream, unsigned) {
  static int token;
  *stream = reinterpret_cast<hipStream_t>(&token);
  return kSuccess;
}

API hipStreamDestroy(hipStream_t) { return kSuccess; }

API hipStreamSynchronize(hipStream_t) { return fake::synchronize(); }

API hipModuleLaunchKernel(hipFunction_t function, unsigned gridX, unsigned gridY, unsigned gridZ,
                          unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                          hipStream_t, void **params, void **extra) {
  const Kernel &kernel = *reinterpret_cast<Kernel *>(function);
  if (extra || !params || !gridX || !gridY || !gridZ ||
      !validLaunch(kernel, blockX, blockY, blockZ, sharedBytes)) {
    std::lock_guard<std::mutex> lock(fake::gpu().mutex);
    ++fake::gpu().counters["bad launches"];
    return kInvalidConfiguration;
  }
  fake::launch(&kernel, params, kIllegalAddress, long(gridX) * gridY * gridZ);
  return kSuccess;
}

API hipStreamBeginCapture(hipStream_t, int) {
  fake::beginCapture();
  return kSuccess;
}

API hipStreamEndCapture(hipStream_t, hipGraph_t *graph) {
  *graph = static_cast<hipGraph_t>(fake::endCapture());
  return kSuccess;
}

API hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t graph, hipGraphNode_t *, char *, size_t) {
  *exec = static_cast<hipGraphExec_t>(fake::instantiate(graph));
  return kSuccess;
}

API hipGraphLaunch(hipGraphExec_t exec, hipStream_t) {
  fake::launchGraph(exec, kIllegalAddress);
  return kSuccess;
}

API hipGraphExecDestroy(hipGraphExec_t exec) {
  fake::destroyGraph(exec, false);
  return kSuccess;
}

API hipGraphDestroy(hipGraph_t graph) {
  fake::destroyGraph(graph, true);
  return kSuccess;
}

API hipEventCreate(hipEvent_t *event) {
  *event = static_cast<hipEvent_t>(fake::createEvent());
  return kSuccess;
}

API hipEventDestroy(hipEvent_t event) {
  fake::destroyEvent(event);
  return kSuccess;
}

API hipEventRecord(hipEvent_t event, hipStream_t) {
  fake::recordEvent(event);
  return kSuccess;
}

API hipEventElapsedTime(float *milliseconds, hipEvent_t start, hipEvent_t end) {
  *milliseconds = fake::elapsed(start, end);
  return kSuccess;
}

} // extern "C"
