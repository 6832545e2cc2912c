// The kiln runtime: artifact loading and verification, the host device, and
// the C API of include/kiln/runtime.h. No LLVM, MLIR or protobuf in here.

#include "kiln/runtime.h"

#include "Cuda.h"
#include "Model.h"
#include "ThreadPool.h"
#include "runtime/format/artifact_generated.h"
#include "runtime/format/format.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {
/// Stands in when there is no memory left for a status of its own.
kiln_status_s outOfMemory{KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory"};
} // namespace

kiln_status_t kiln::makeStatus(kiln_status_code_t code, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  auto *status = new (std::nothrow) kiln_status_s{code, buffer};
  return status ? status : &outOfMemory;
}

kiln::Storage::~Storage() {
  if (mapped)
    munmap(data, size);
  else
    free(data);
}

kiln_model_s::~kiln_model_s() {
  for (kiln::cuda::ModelState *state : cudaStates)
    kiln::cuda::destroy(state);
  if (library)
    dlclose(library);
  if (codeFd >= 0)
    close(codeFd);
}

using namespace kiln;

std::string kiln::codeTargets(const kiln_model_t &model) {
  std::vector<std::string> targets;
  for (const CodeObject &code : model.code)
    if (std::find(targets.begin(), targets.end(), code.target) == targets.end())
      targets.push_back(code.target);
  std::string list;
  for (const std::string &target : targets)
    list += (list.empty() ? "" : ", ") + target;
  return list;
}

namespace {

bool checkedMul(size_t a, size_t b, size_t &out) { return !__builtin_mul_overflow(a, b, &out); }

/// Whether [offset, offset + size) lies inside a file of `fileSize` bytes.
bool inFile(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

/// x86-64 micro-architecture levels of the running CPU.
int hostLevel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4"))
    return 4;
  if (__builtin_cpu_supports("x86-64-v3"))
    return 3;
  if (__builtin_cpu_supports("x86-64-v2"))
    return 2;
  return 1;
}

} // namespace

struct kiln_session_s {
  kiln_model_t *model;
  std::string device;
  std::string target; ///< of the code it runs, on the host
  // On the host: the arena and the threads.
  void *arena = nullptr;
  std::unique_ptr<kiln::ThreadPool> pool;
  kiln_host_context_t context = {};
  // On a GPU.
  kiln::cuda::Session *cuda = nullptr;
  /// Outputs the session allocated, freed at the next run or the end.
  std::vector<void *> ownedOutputs;

  ~kiln_session_s() {
    kiln::cuda::destroySession(cuda);
    free(arena);
    for (void *output : ownedOutputs)
      free(output);
    kiln_model_release(model);
  }
};

namespace {

kiln_status_t readTensors(const flatbuffers::Vector<flatbuffers::Offset<artifact::Tensor>> *list,
                          const char *what, std::vector<TensorInfo> &out) {
  for (const artifact::Tensor *tensor : *list) {
    TensorInfo info;
    info.name = tensor->name()->str();
    info.dtype = static_cast<kiln_dtype_t>(tensor->dtype());
    size_t elementSize = kiln_dtype_size(info.dtype);
    if (info.name.empty() || elementSize == 0)
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: an %s has no name or an unknown dtype", what);
    size_t count = 1;
    for (int64_t dim : *tensor->shape()) {
      if (dim < 0 || !checkedMul(count, size_t(dim), count))
        return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' has an invalid shape", what,
                          info.name.c_str());
      info.shape.push_back(dim);
    }
    if (!checkedMul(count, elementSize, info.byteSize))
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' is too large", what,
                        info.name.c_str());
    for (const TensorInfo &other : out)
      if (other.name == info.name)
        return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: two %ss are named '%s'", what,
                          info.name.c_str());
    out.push_back(std::move(info));
  }
  return nullptr;
}

/// Loads the host code: the shared object is written to an anonymous file
/// and opened from there, so nothing touches the file system.
kiln_status_t loadHostCode(kiln_model_t *model, const uint8_t *code, size_t size) {
  int fd = memfd_create("kiln-host-code", MFD_CLOEXEC);
  if (fd < 0)
    return makeStatus(KILN_STATUS_INTERNAL, "cannot create memory for the host code: %s", strerror(errno));
  model->codeFd = fd;
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, code + written, size - written);
    if (n <= 0)
      return makeStatus(KILN_STATUS_INTERNAL, "cannot write the host code: %s", strerror(errno));
    written += size_t(n);
  }
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  // A library still loaded under this path would be returned instead.
  if (void *stale = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(stale);
    return makeStatus(KILN_STATUS_INTERNAL, "cannot load the host code: %s is taken", path);
  }
  model->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!model->library)
    return makeStatus(KILN_STATUS_DATA_LOSS, "cannot load the host code: %s", dlerror());
  model->entry = reinterpret_cast<void (*)(void **)>(dlsym(model->library, "kiln_entry"));
  if (!model->entry)
    return makeStatus(KILN_STATUS_DATA_LOSS, "the host code has no kiln_entry");
  return nullptr;
}

/// Reads a tensor map over `arg`'s buffer, checking it has what
/// cuTensorMapEncodeTiled takes (1 to 5 dimensions, a box extent of 1 to
/// 256 each, a stride for each dimension after the first, a swizzle span
/// of 0, 32, 64 or 128 bytes) and that every element it maps lies within
/// the `limit` bytes of the buffer's memory.
bool readTensorMap(const artifact::TensorMap *map, uint64_t limit, LaunchArg &arg) {
  size_t rank = map->dims()->size();
  if (rank < 1 || rank > 5 || map->strides()->size() != rank - 1 || map->box()->size() != rank)
    return false;
  arg.tensorMap = true;
  arg.mapDims.assign(map->dims()->begin(), map->dims()->end());
  arg.mapStrides.assign(map->strides()->begin(), map->strides()->end());
  arg.mapBox.assign(map->box()->begin(), map->box()->end());
  arg.swizzle = map->swizzle();
  if (arg.swizzle != 0 && arg.swizzle != 32 && arg.swizzle != 64 && arg.swizzle != 128)
    return false;
  // The last element's byte, with every product checked for overflow.
  constexpr uint64_t kElementBytes = 4, kMaxBytes = uint64_t(1) << 48;
  if (arg.offset < 0 || uint64_t(arg.offset) > kMaxBytes / kElementBytes)
    return false;
  uint64_t end = arg.byteOffset + uint64_t(arg.offset) * kElementBytes + kElementBytes;
  for (size_t i = 0; i < rank; ++i) {
    uint64_t dim = arg.mapDims[i], stride = i ? arg.mapStrides[i - 1] : kElementBytes;
    if (dim < 1 || dim > kMaxBytes || stride > kMaxBytes || arg.mapBox[i] < 1 || arg.mapBox[i] > 256)
      return false;
    if (dim - 1 > (kMaxBytes - end) / std::max<uint64_t>(stride, 1))
      return false;
    end += (dim - 1) * stride;
  }
  return end <= limit;
}

/// Reads a GPU launch's arguments, checking each buffer lies in memory the
/// plan has.
kiln_status_t readLaunch(const artifact::Launch *in, const kiln_model_t *model, uint64_t arenaBytes,
                         uint64_t weightsSize, Launch &out) {
  auto corrupt = [&](const char *what) {
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: kernel '%s' has %s",
                      in->kernel()->c_str(), what);
  };
  out.kernel = in->kernel()->str();
  if (in->grid()->size() != 3 || in->block()->size() != 3)
    return corrupt("an invalid launch shape");
  for (int i = 0; i < 3; ++i) {
    out.grid[i] = in->grid()->Get(i);
    out.block[i] = in->block()->Get(i);
    if (out.grid[i] == 0 || out.block[i] == 0)
      return corrupt("an empty launch shape");
  }
  out.sharedBytes = in->shared_bytes();
  for (const artifact::LaunchArg *arg : *in->args()) {
    LaunchArg &result = out.args.emplace_back();
    if (!arg->base()) {
      if (arg->width() != 1 && arg->width() != 2 && arg->width() != 4 && arg->width() != 8)
        return corrupt("a scalar argument of an invalid width");
      result.width = arg->width();
      result.bits = arg->bits();
      continue;
    }
    std::string base = arg->base()->str();
    uint64_t limit;
    if (base == "input" && arg->index() < model->inputs.size()) {
      result.base = LaunchArg::Base::Input;
      limit = model->inputs[arg->index()].byteSize;
    } else if (base == "output" && arg->index() < model->outputs.size()) {
      result.base = LaunchArg::Base::Output;
      limit = model->outputs[arg->index()].byteSize;
    } else if (base == "arena") {
      result.base = LaunchArg::Base::Arena;
      limit = arenaBytes;
    } else if (base == "weights") {
      result.base = LaunchArg::Base::Weights;
      limit = weightsSize;
    } else {
      return corrupt("an argument in unknown memory");
    }
    if (!arg->sizes() || !arg->strides() || arg->sizes()->size() != arg->strides()->size() ||
        arg->byte_offset() > limit)
      return corrupt("a buffer argument outside its memory");
    result.index = arg->index();
    result.byteOffset = arg->byte_offset();
    result.offset = arg->offset();
    result.sizes.assign(arg->sizes()->begin(), arg->sizes()->end());
    result.strides.assign(arg->strides()->begin(), arg->strides()->end());
    if (const artifact::TensorMap *map = arg->tensor_map())
      if (!readTensorMap(map, limit, result))
        return corrupt("a tensor map outside its buffer's memory or beyond what TMA can map");
  }
  return nullptr;
}

/// Reads each plan: its memory, its weights' place in the file, and on a
/// GPU its launches.
kiln_status_t readPlans(const artifact::Model *manifest, size_t fileSize, kiln_model_t *model) {
  for (const artifact::Plan *in : *manifest->plans()) {
    Plan &plan = model->plans.emplace_back();
    plan.arenaBytes = in->arena_bytes();
    plan.weightsSize = in->weights_size();
    if (!inFile(in->weights_offset(), in->weights_size(), fileSize) ||
        in->weights_offset() % KILN_WEIGHTS_ALIGNMENT != 0)
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: invalid weights section");
    plan.weights = model->storage.data + in->weights_offset();
    if (!in->kernels())
      continue;
    for (const artifact::Kernel *kernel : *in->kernels())
      if (kernel->launch())
        if (kiln_status_t status = readLaunch(kernel->launch(), model, plan.arenaBytes,
                                              plan.weightsSize, plan.launches.emplace_back()))
          return status;
  }
  if (model->plans.empty())
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: no execution plan");
  return nullptr;
}

/// Verifies the artifact in `model->storage` and fills in the model; loads
/// its host code unless `loadCode` is false.
kiln_status_t verifyAndLoad(kiln_model_t *model, bool loadCode) {
  const uint8_t *data = model->storage.data;
  size_t size = model->storage.size;
  if (size < KILN_HEADER_SIZE)
    return makeStatus(KILN_STATUS_DATA_LOSS, "not a kiln artifact: only %zu bytes", size);
  kiln_file_header_t header;
  memcpy(&header, data, sizeof(header));
  if (memcmp(header.magic, KILN_MAGIC, 8) != 0)
    return makeStatus(KILN_STATUS_DATA_LOSS, "not a kiln artifact (wrong magic number)");
  if (header.format_version > KILN_FORMAT_VERSION)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "the artifact has format version %u; this runtime reads up to version %u",
                      header.format_version, KILN_FORMAT_VERSION);
  if (header.file_size != size)
    return makeStatus(KILN_STATUS_DATA_LOSS,
                      "truncated or padded artifact: its header says %llu bytes, there are %zu",
                      (unsigned long long)header.file_size, size);
  if (kiln_checksum(data, size) != header.checksum)
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the checksum does not match");
  if (header.format_version == 0 || header.header_size != KILN_HEADER_SIZE ||
      !inFile(header.manifest_offset, header.manifest_size, size))
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: invalid header");

  if (header.manifest_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the manifest is too large");
  const uint8_t *manifestData = data + header.manifest_offset;
  flatbuffers::Verifier verifier(manifestData, header.manifest_size);
  if (!artifact::VerifyModelBuffer(verifier))
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the manifest does not verify");
  const artifact::Model *manifest = artifact::GetModel(manifestData);
  if (kiln_status_t status = readTensors(manifest->inputs(), "input", model->inputs))
    return status;
  if (kiln_status_t status = readTensors(manifest->outputs(), "output", model->outputs))
    return status;
  if (kiln_status_t status = readPlans(manifest, size, model))
    return status;

  using artifact::CodeKind;
  const CodeObject *host = nullptr;
  for (const artifact::Code *code : *manifest->code()) {
    if (!inFile(code->offset(), code->size(), size) || code->plan() >= model->plans.size() ||
        code->kind() > CodeKind::MAX)
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: invalid code section");
    CodeObject::Kind kind = code->kind() == CodeKind::HostSharedObject ? CodeObject::Kind::Host
                            : code->kind() == CodeKind::PTX            ? CodeObject::Kind::PTX
                                                                       : CodeObject::Kind::Cubin;
    model->code.push_back({kind, code->target()->str(), data + code->offset(), size_t(code->size()),
                           code->plan()});
  }
  if (model->code.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "the artifact holds no code");
  for (const CodeObject &code : model->code)
    if (code.kind == CodeObject::Kind::Host) {
      if (host)
        return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: two sections of host code");
      host = &code;
    }
  if (!loadCode)
    return nullptr;
  model->hasCode = true;
  if (!host) {
    model->hostUnavailable = "the artifact has no code for the host CPU (it holds code for " +
                             codeTargets(*model) + "); compile with --target host";
    return nullptr;
  }
  if (!model->plans[host->plan].launches.empty())
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the host code's plan launches GPU kernels");
  // x86-64-vN names the micro-architecture level the code needs.
  int needed = host->target.rfind("x86-64-v", 0) == 0 ? atoi(host->target.c_str() + 8) : 1;
  if (needed > hostLevel()) {
    char reason[256];
    snprintf(reason, sizeof(reason),
             "the host code was compiled for %s, which this CPU does not support "
             "(it is x86-64-v%d); compile with --host-cpu=native or an older level",
             host->target.c_str(), hostLevel());
    // Code for a GPU may still run.
    if (model->code.size() == 1)
      return makeStatus(KILN_STATUS_UNAVAILABLE, "%s", reason);
    model->hostUnavailable = reason;
    return nullptr;
  }
  model->hostPlan = int(host->plan);
  return loadHostCode(model, host->data, host->size);
}

bool wantsCode(const kiln_model_options_t *options) {
  return !options || !(options->flags & KILN_MODEL_LOAD_NO_CODE);
}

kiln_status_t finishLoad(std::unique_ptr<kiln_model_t> model, bool loadCode,
                         kiln_model_t **out_model) {
  if (kiln_status_t status = verifyAndLoad(model.get(), loadCode))
    return status;
  *out_model = model.release();
  return nullptr;
}

kiln_status_t describe(const std::vector<TensorInfo> &list, size_t index, const char *what,
                       kiln_tensor_info_t *out) {
  if (index >= list.size())
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s index %zu is out of range (the model has %zu)",
                      what, index, list.size());
  const TensorInfo &info = list[index];
  *out = {info.name.c_str(), info.dtype, info.shape.size(), info.shape.data(), info.byteSize};
  return nullptr;
}

/// Checks a caller's tensor against the model's.
kiln_status_t checkTensor(const kiln_tensor_t &tensor, const TensorInfo &info, const char *what) {
  if (tensor.dtype != info.dtype)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has dtype %s; the model expects %s", what,
                      info.name.c_str(), kiln_dtype_name(tensor.dtype), kiln_dtype_name(info.dtype));
  bool sameShape = tensor.rank == info.shape.size() &&
                   (tensor.rank == 0 ||
                    (tensor.shape && memcmp(tensor.shape, info.shape.data(),
                                            tensor.rank * sizeof(int64_t)) == 0));
  if (!sameShape) {
    std::string expected;
    for (int64_t dim : info.shape)
      expected += (expected.empty() ? "" : "x") + std::to_string(dim);
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has the wrong shape; the model expects %s",
                      what, info.name.c_str(), expected.empty() ? "a scalar" : expected.c_str());
  }
  if (tensor.byte_size != info.byteSize)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has %zu bytes; the model expects %zu", what,
                      info.name.c_str(), tensor.byte_size, info.byteSize);
  if (!tensor.data && info.byteSize)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has no data", what, info.name.c_str());
  return nullptr;
}

/// The model tensor named `name`, or the list's size.
size_t find(const std::vector<TensorInfo> &list, const char *name) {
  for (size_t i = 0; i < list.size(); ++i)
    if (name && list[i].name == name)
      return i;
  return list.size();
}

} // namespace

// The API functions keep the C linkage the header gives them.

kiln_status_code_t kiln_status_code(kiln_status_t status) {
  return status ? status->code : KILN_STATUS_OK;
}

const char *kiln_status_message(kiln_status_t status) {
  return status ? status->message.c_str() : "";
}

void kiln_status_free(kiln_status_t status) {
  if (status != &outOfMemory)
    delete status;
}

size_t kiln_dtype_size(kiln_dtype_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F64: case KILN_DTYPE_I64: case KILN_DTYPE_U64: return 8;
  case KILN_DTYPE_F32: case KILN_DTYPE_I32: case KILN_DTYPE_U32: return 4;
  case KILN_DTYPE_F16: case KILN_DTYPE_BF16: case KILN_DTYPE_I16: case KILN_DTYPE_U16: return 2;
  case KILN_DTYPE_I8: case KILN_DTYPE_U8: case KILN_DTYPE_BOOL:
  case KILN_DTYPE_F8E4M3FN: case KILN_DTYPE_F8E5M2: return 1;
  }
  return 0;
}

const char *kiln_dtype_name(kiln_dtype_t dtype) {
  static const char *const names[] = {"f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64",
                                      "u8", "u16", "u32", "u64", "bool", "f8e4m3fn", "f8e5m2"};
  unsigned index = unsigned(dtype);
  return index < sizeof(names) / sizeof(names[0]) ? names[index] : "unknown";
}

namespace {

/// Runs an API body; no exception (std::bad_alloc from a std::string, say)
/// crosses the C ABI.
template <typename Body>
kiln_status_t guarded(Body body) {
  try {
    return body();
  } catch (...) {
    return &outOfMemory;
  }
}

kiln_status_t loadFile(const char *path, const kiln_model_options_t *options,
                       kiln_model_t **out_model) {
  if (!path || !out_model)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_load_file: path and out_model must not be NULL");
  *out_model = nullptr;
  if (options && options->api_version > KILN_API_VERSION)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED, "options of API version %u; this runtime has %u",
                      options->api_version, KILN_API_VERSION);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return makeStatus(errno == ENOENT ? KILN_STATUS_NOT_FOUND : KILN_STATUS_INVALID_ARGUMENT,
                      "cannot open '%s': %s", path, strerror(errno));
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "'%s' is not a regular file", path);
  }
  auto model = std::unique_ptr<kiln_model_t>(new (std::nothrow) kiln_model_t);
  if (!model) {
    close(fd);
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (info.st_size > 0) {
    void *mapping = mmap(nullptr, size_t(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      close(fd);
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot map '%s': %s", path, strerror(errno));
    }
    model->storage.data = static_cast<uint8_t *>(mapping);
    model->storage.size = size_t(info.st_size);
    model->storage.mapped = true;
  }
  close(fd);
  kiln_status_t status = finishLoad(std::move(model), wantsCode(options), out_model);
  if (status && status != &outOfMemory)
    status->message = std::string(path) + ": " + status->message;
  return status;
}

kiln_status_t loadMemory(const void *data, size_t size, const kiln_model_options_t *options,
                         kiln_model_t **out_model) {
  if (!data || !out_model)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_load_memory: data and out_model must not be NULL");
  *out_model = nullptr;
  if (options && options->api_version > KILN_API_VERSION)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED, "options of API version %u; this runtime has %u",
                      options->api_version, KILN_API_VERSION);
  auto model = std::unique_ptr<kiln_model_t>(new (std::nothrow) kiln_model_t);
  void *copy = nullptr;
  if (!model || posix_memalign(&copy, KILN_WEIGHTS_ALIGNMENT, size ? size : 1) != 0)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory copying a %zu-byte artifact", size);
  memcpy(copy, data, size);
  model->storage.data = static_cast<uint8_t *>(copy);
  model->storage.size = size;
  return finishLoad(std::move(model), wantsCode(options), out_model);
}

} // namespace

kiln_status_t kiln_model_load_file(const char *path, const kiln_model_options_t *options,
                                   kiln_model_t **out_model) {
  return guarded([&] { return loadFile(path, options, out_model); });
}

kiln_status_t kiln_model_load_memory(const void *data, size_t size,
                                     const kiln_model_options_t *options, kiln_model_t **out_model) {
  return guarded([&] { return loadMemory(data, size, options, out_model); });
}

void kiln_model_retain(kiln_model_t *model) {
  if (model)
    model->references.fetch_add(1, std::memory_order_relaxed);
}

void kiln_model_release(kiln_model_t *model) {
  if (model && model->references.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete model;
}

size_t kiln_model_input_count(const kiln_model_t *model) { return model ? model->inputs.size() : 0; }
size_t kiln_model_output_count(const kiln_model_t *model) { return model ? model->outputs.size() : 0; }
uint64_t kiln_model_arena_bytes(const kiln_model_t *model) {
  if (!model || model->plans.empty())
    return 0;
  return model->plans[model->hostPlan >= 0 ? size_t(model->hostPlan) : 0].arenaBytes;
}

kiln_status_t kiln_model_input_info(const kiln_model_t *model, size_t index, kiln_tensor_info_t *out_info) {
  if (!model || !out_info)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_input_info: model and out_info must not be NULL");
  return describe(model->inputs, index, "input", out_info);
}

kiln_status_t kiln_model_output_info(const kiln_model_t *model, size_t index, kiln_tensor_info_t *out_info) {
  if (!model || !out_info)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_output_info: model and out_info must not be NULL");
  return describe(model->outputs, index, "output", out_info);
}

kiln_status_t kiln_session_create(kiln_model_t *model, const kiln_session_options_t *options,
                                  kiln_session_t **out_session) {
  if (!model || !out_session)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_create: model and out_session must not be NULL");
  *out_session = nullptr;
  if (options && options->api_version > KILN_API_VERSION)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED, "options of API version %u; this runtime has %u",
                      options->api_version, KILN_API_VERSION);
  if (!model->hasCode)
    return makeStatus(KILN_STATUS_UNAVAILABLE, "the model was loaded without its code and cannot run");
  const char *device = options && options->device ? options->device : "host";
  uint32_t flags = options && options->api_version >= 3 ? options->flags : 0;
  auto session = std::unique_ptr<kiln_session_s>(new (std::nothrow) kiln_session_s{model, device});
  if (!session)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  kiln_model_retain(model);

  // "cuda" or "cuda:N".
  if (strncmp(device, "cuda", 4) == 0 && (device[4] == '\0' || device[4] == ':')) {
    char *end = nullptr;
    long ordinal = device[4] ? strtol(device + 5, &end, 10) : 0;
    if (device[4] && (end == device + 5 || *end != '\0' || ordinal < 0 || ordinal > 1024))
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "device '%s': expected cuda:N, N the GPU's number from 0", device);
    bool profile = options && options->api_version >= 4 && (flags & KILN_SESSION_PROFILE);
    if (kiln_status_t status = cuda::createSession(model, int(ordinal),
                                                   !(flags & KILN_SESSION_NO_CUDA_GRAPH), profile,
                                                   &session->cuda))
      return status;
    session->device = cuda::describe(session->cuda);
    *out_session = session.release();
    return nullptr;
  }
  if (strcmp(device, "host") != 0)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "device '%s' is not available: this runtime runs models on 'host' and 'cuda:N'",
                      device);
  if (model->hostPlan < 0)
    return makeStatus(KILN_STATUS_UNAVAILABLE, "%s", model->hostUnavailable.c_str());
  for (const kiln::CodeObject &code : model->code)
    if (code.kind == kiln::CodeObject::Kind::Host)
      session->target = code.target;
  unsigned threads = options && options->api_version >= 2 ? options->threads : 0;
  if (threads == 0)
    threads = kiln::ThreadPool::availableThreads();
  uint64_t arenaBytes = model->plans[model->hostPlan].arenaBytes;
  if (posix_memalign(&session->arena, 64, arenaBytes ? arenaBytes : 1) != 0) {
    session->arena = nullptr;
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate the %llu-byte activation arena",
                      (unsigned long long)arenaBytes);
  }
  try {
    session->pool = std::make_unique<kiln::ThreadPool>(threads);
  } catch (const std::exception &error) {
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot start %u threads: %s", threads,
                      error.what());
  }
  session->context.parallel_for = &kiln::ThreadPool::parallelFor;
  session->context.pool = session->pool.get();
  *out_session = session.release();
  return nullptr;
}

void kiln_session_destroy(kiln_session_t *session) { delete session; }

uint32_t kiln_session_threads(const kiln_session_t *session) {
  return session && session->pool ? session->pool->threads() : 0;
}

const char *kiln_session_device(const kiln_session_t *session) {
  return session ? session->device.c_str() : "";
}

const char *kiln_session_target(const kiln_session_t *session) {
  if (!session)
    return "";
  return session->cuda ? cuda::target(session->cuda) : session->target.c_str();
}

namespace {

/// Checks and runs a run; on a GPU, returns once it is queued unless `wait`.
kiln_status_t run(kiln_session_t *session, const kiln_tensor_t *inputs, size_t input_count,
                  kiln_tensor_t *outputs, size_t output_count, bool wait) {
  if (!session || (input_count && !inputs) || (output_count && !outputs))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_run: session, inputs and outputs must not be NULL");
  // The outputs a run in flight writes stay as they are until it ends.
  if (session->cuda)
    if (kiln_status_t status = cuda::wait(session->cuda))
      return status;
  kiln_model_t *model = session->model;
  size_t numInputs = model->inputs.size(), numOutputs = model->outputs.size();
  // The entry point's arguments: inputs, outputs, arena, weights, context.
  std::vector<void *> buffers(numInputs + numOutputs + 3, nullptr);
  std::vector<bool> seen(numInputs, false);
  for (size_t i = 0; i < input_count; ++i) {
    size_t index = find(model->inputs, inputs[i].name);
    if (index == numInputs)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "the model has no input named '%s'",
                        inputs[i].name ? inputs[i].name : "(null)");
    if (seen[index])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "input '%s' is given twice", inputs[i].name);
    seen[index] = true;
    if (kiln_status_t status = checkTensor(inputs[i], model->inputs[index], "input"))
      return status;
    buffers[index] = inputs[i].data;
  }
  for (size_t i = 0; i < numInputs; ++i)
    if (!seen[i])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "input '%s' is missing", model->inputs[i].name.c_str());

  // Outputs the caller gives buffers for are written in place.
  std::vector<size_t> outputIndex(output_count);
  std::vector<bool> asked(numOutputs, false);
  for (size_t i = 0; i < output_count; ++i) {
    size_t index = find(model->outputs, outputs[i].name);
    if (index == numOutputs)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "the model has no output named '%s'",
                        outputs[i].name ? outputs[i].name : "(null)");
    if (asked[index])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "output '%s' is asked for twice", outputs[i].name);
    if (outputs[i].data)
      if (kiln_status_t status = checkTensor(outputs[i], model->outputs[index], "output"))
        return status;
    asked[index] = true;
    outputIndex[i] = index;
    buffers[numInputs + index] = outputs[i].data;
  }
  // Every other output, asked for without a buffer or not asked for at all,
  // gets a fresh one.
  std::vector<void *> fresh;
  for (size_t i = 0; i < numOutputs; ++i) {
    if (buffers[numInputs + i])
      continue;
    void *buffer = nullptr;
    size_t size = model->outputs[i].byteSize;
    if (posix_memalign(&buffer, 64, size ? size : 1) != 0) {
      for (void *other : fresh)
        free(other);
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate output '%s'",
                        model->outputs[i].name.c_str());
    }
    fresh.push_back(buffer);
    buffers[numInputs + i] = buffer;
  }
  if (session->cuda) {
    std::vector<const void *> in(buffers.begin(), buffers.begin() + numInputs);
    std::vector<void *> out(buffers.begin() + numInputs, buffers.begin() + numInputs + numOutputs);
    kiln_status_t status = cuda::enqueue(session->cuda, in, out);
    if (!status && wait)
      status = cuda::wait(session->cuda);
    if (status) {
      for (void *buffer : fresh)
        free(buffer);
      return status;
    }
  } else {
    buffers[numInputs + numOutputs] = session->arena;
    buffers[numInputs + numOutputs + 1] =
        const_cast<uint8_t *>(model->plans[model->hostPlan].weights);
    buffers[numInputs + numOutputs + 2] = &session->context;
    model->entry(buffers.data());
  }

  // Hand out the session-owned outputs; the previous run's are freed.
  for (void *old : session->ownedOutputs)
    free(old);
  session->ownedOutputs.clear();
  for (size_t i = 0; i < output_count; ++i) {
    size_t index = outputIndex[i];
    const TensorInfo &info = model->outputs[index];
    if (!outputs[i].data) {
      outputs[i].data = buffers[numInputs + index];
      outputs[i].dtype = info.dtype;
      outputs[i].rank = info.shape.size();
      outputs[i].shape = info.shape.data();
      outputs[i].byte_size = info.byteSize;
    }
  }
  session->ownedOutputs = std::move(fresh);
  return nullptr;
}

} // namespace

kiln_status_t kiln_session_run(kiln_session_t *session, const kiln_tensor_t *inputs, size_t input_count,
                               kiln_tensor_t *outputs, size_t output_count) {
  return guarded([&] { return run(session, inputs, input_count, outputs, output_count, true); });
}

kiln_status_t kiln_session_run_async(kiln_session_t *session, const kiln_tensor_t *inputs,
                                     size_t input_count, kiln_tensor_t *outputs,
                                     size_t output_count) {
  return guarded([&] { return run(session, inputs, input_count, outputs, output_count, false); });
}

double kiln_session_kernel_milliseconds(const kiln_session_t *session) {
  return session && session->cuda ? cuda::kernelMilliseconds(session->cuda) : 0.0;
}

size_t kiln_session_kernel_profile(const kiln_session_t *session, double *milliseconds,
                                   size_t count) {
  if (!session || !session->cuda)
    return 0;
  return cuda::kernelProfile(session->cuda, milliseconds, milliseconds ? count : 0);
}

kiln_status_t kiln_session_wait(kiln_session_t *session) {
  if (!session)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_wait: session must not be NULL");
  return guarded([&] { return session->cuda ? cuda::wait(session->cuda) : nullptr; });
}

