// The loader: maps or copies an artifact, verifies every byte of it that
// the runtime reads (header, checksum, manifest, each offset and size in
// it) and reads it into a kiln_model_t.

#include "runtime/src/Loader.h"

#include "runtime/format/artifact_generated.h"
#include "runtime/format/format.h"
#include "runtime/src/Status.h"
#include "runtime/src/host/HostCode.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;

namespace {

bool checkedMul(size_t a, size_t b, size_t &out) { return !__builtin_mul_overflow(a, b, &out); }

/// Whether [offset, offset + size) lies inside a file of `fileSize` bytes.
bool inFile(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

kiln_status_t readTensors(const flatbuffers::Vector<flatbuffers::Offset<artifact::Tensor>> *list,
                          const char *what, std::vector<TensorInfo> &out) {
  for (const artifact::Tensor *tensor : *list) {
    TensorInfo info;
    info.name = tensor->name()->str();
    info.dtype = static_cast<kiln_dtype_t>(tensor->dtype());
    size_t elementSize = kiln_dtype_size(info.dtype);
    if (info.name.empty() || elementSize == 0)
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: an %s has no name or an unknown dtype", what);
    size_t count = 1;
    for (int64_t dim : *tensor->shape()) {
      if (dim < 0 || !checkedMul(count, size_t(dim), count))
        return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' has an invalid shape",
                          what, info.name.c_str());
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
    if (dim < 1 || dim > kMaxBytes || stride > kMaxBytes || arg.mapBox[i] < 1 ||
        arg.mapBox[i] > 256)
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
    plan.kernels = in->kernels()->size();
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
  std::vector<const CodeObject *> host;
  for (const artifact::Code *code : *manifest->code()) {
    if (!inFile(code->offset(), code->size(), size) || code->plan() >= model->plans.size() ||
        code->kind() > CodeKind::MAX)
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: invalid code section");
    CodeObject::Kind kind = code->kind() == CodeKind::HostSharedObject ? CodeObject::Kind::Host
                            : code->kind() == CodeKind::PTX            ? CodeObject::Kind::PTX
                                                                       : CodeObject::Kind::Cubin;
    model->code.push_back(
        {kind, code->target()->str(), data + code->offset(), size_t(code->size()), code->plan()});
  }
  if (model->code.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "the artifact holds no code");
  for (const CodeObject &code : model->code) {
    if (code.kind != CodeObject::Kind::Host)
      continue;
    for (const CodeObject *other : host)
      if (other->target == code.target)
        return makeStatus(KILN_STATUS_DATA_LOSS,
                          "corrupt artifact: two sections of host code for %s",
                          code.target.c_str());
    if (!model->plans[code.plan].launches.empty())
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: the host code's plan launches GPU kernels");
    host.push_back(&code);
  }
  if (!loadCode)
    return nullptr;
  model->hasCode = true;
  if (host.empty()) {
    model->hostUnavailable = "the artifact has no code for the host CPU (it holds code for " +
                             codeTargets(*model) + "); compile with --target host";
    return nullptr;
  }
  return host::loadCode(*model, host);
}

kiln_status_t finishLoad(std::unique_ptr<kiln_model_t> model, bool loadCode,
                         kiln_model_t **out_model) {
  if (kiln_status_t status = verifyAndLoad(model.get(), loadCode))
    return status;
  *out_model = model.release();
  return nullptr;
}

} // namespace

kiln_status_t kiln::loadFile(const char *path, bool loadCode, kiln_model_t **out_model) {
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
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot map '%s': %s", path,
                        strerror(errno));
    }
    model->storage.data = static_cast<uint8_t *>(mapping);
    model->storage.size = size_t(info.st_size);
    model->storage.mapped = true;
  }
  close(fd);
  kiln_status_t status = finishLoad(std::move(model), loadCode, out_model);
  if (status && status != outOfMemory())
    status->message = std::string(path) + ": " + status->message;
  return status;
}

kiln_status_t kiln::loadMemory(const void *data, size_t size, bool loadCode,
                               kiln_model_t **out_model) {
  auto model = std::unique_ptr<kiln_model_t>(new (std::nothrow) kiln_model_t);
  void *copy = nullptr;
  if (!model || posix_memalign(&copy, KILN_WEIGHTS_ALIGNMENT, size ? size : 1) != 0)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory copying a %zu-byte artifact",
                      size);
  memcpy(copy, data, size);
  model->storage.data = static_cast<uint8_t *>(copy);
  model->storage.size = size;
  return finishLoad(std::move(model), loadCode, out_model);
}
