// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The loader: maps or copies an artifact, verifies every byte of it that
// the runtime reads (header, digest, signature, manifest, each offset and
// size in it, the layout of its sections) and reads it into a kiln_model_t.

#include "runtime/src/Loader.h"

#include "runtime/format/DimProgram.h"
#include "runtime/format/artifact_generated.h"
#include "runtime/format/format.h"
#include "runtime/src/Device.h"
#include "runtime/src/Status.h"
#include "runtime/src/host/HostCode.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;

namespace {

/// The most dimensions a tensor may have (NumPy's limit).
constexpr size_t kMaxRank = 64;

bool checkedMul(size_t a, size_t b, size_t &out) { return !__builtin_mul_overflow(a, b, &out); }

std::string keyHex(const uint8_t key[KILN_KEY_BYTES]) {
  char hex[2 * KILN_KEY_BYTES + 1];
  kiln_key_hex(key, hex);
  return hex;
}

/// Whether a vector's elements are aligned for their type (an empty one has
/// none to read). The writer aligns them; FlatBuffers' verifier checks only
/// the length before them, so an edited offset could leave 8-byte elements
/// on a 4-byte boundary.
template <typename T> bool aligned(const flatbuffers::Vector<T> *vector) {
  return vector->size() == 0 || reinterpret_cast<uintptr_t>(vector->data()) % alignof(T) == 0;
}

uint64_t alignTo(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

/// Whether [offset, offset + size) lies inside a file of `fileSize` bytes.
bool inFile(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

/// Reads the symbols, each named once, with 0 <= min <= opt <= max.
kiln_status_t readSymbols(const artifact::Model *manifest, kiln_model_t *model) {
  if (!manifest->symbols())
    return nullptr;
  for (const artifact::Symbol *symbol : *manifest->symbols()) {
    SymbolInfo info{symbol->name()->str(), symbol->min(), symbol->max(), symbol->opt()};
    if (info.name.empty() || info.min < 0 || info.min > info.opt || info.opt > info.max)
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: symbol %zu ('%s') has no name or an invalid range",
                        model->symbols.size(), info.name.c_str());
    for (const SymbolInfo &other : model->symbols)
      if (other.name == info.name)
        return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: two symbols are named '%s'",
                          info.name.c_str());
    model->symbols.push_back(std::move(info));
  }
  return nullptr;
}

/// Reads a symbolic tensor's dimension programs into `info`, whose shape is
/// read: one a dimension, valid, the size itself where the shape has one.
/// Sets the byte size to the tensor's at the symbols' largest values.
kiln_status_t readDims(const artifact::Tensor *tensor, const char *what,
                       const std::vector<SymbolInfo> &symbols, TensorInfo &info) {
  auto corrupt = [&](const char *why) {
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' %s", what,
                      info.name.c_str(), why);
  };
  if (tensor->dims()->size() != info.shape.size())
    return corrupt("has dimensions of another rank than its shape");
  std::vector<int64_t> largest;
  for (const SymbolInfo &symbol : symbols)
    largest.push_back(symbol.max);
  std::vector<std::string_view> names;
  for (const SymbolInfo &symbol : symbols)
    names.push_back(symbol.name);
  size_t count = 1;
  bool symbolic = false;
  for (size_t d = 0; d < info.shape.size(); ++d) {
    const flatbuffers::Vector<int64_t> *words = tensor->dims()->Get(d)->program();
    if (!aligned(words))
      return corrupt("has a misaligned dimension");
    format::DimProgram program{words->data(), words->size()};
    if (!format::validDims(program, symbols.size()))
      return corrupt("has an invalid dimension");
    std::optional<int64_t> size = format::evaluateDim(program, largest);
    if (info.shape[d] >= 0) {
      if (size != info.shape[d])
        return corrupt("has a static dimension whose program is not its size");
    } else {
      symbolic = true;
      info.dimTexts.push_back(format::dimText(program, names));
    }
    if (!size || *size < 0 || !checkedMul(count, size_t(*size), count))
      return corrupt("is too large at the symbols' largest values");
    if (info.shape[d] >= 0)
      info.dimTexts.emplace_back();
    info.dims.emplace_back(words->begin(), words->end());
  }
  if (!symbolic)
    return corrupt("has dimensions but no symbolic one");
  if (!checkedMul(count, kiln_dtype_size(info.dtype), info.byteSize))
    return corrupt("is too large");
  return nullptr;
}

kiln_status_t readTensors(const flatbuffers::Vector<flatbuffers::Offset<artifact::Tensor>> *list,
                          const char *what, const std::vector<SymbolInfo> &symbols,
                          std::vector<TensorInfo> &out) {
  for (const artifact::Tensor *tensor : *list) {
    TensorInfo info;
    info.name = tensor->name()->str();
    if (info.name.empty())
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s %zu has no name", what,
                        out.size());
    // The enum is read as its byte, and checked, before it is one.
    auto dtype = uint8_t(tensor->dtype());
    if (dtype > uint8_t(artifact::DType::MAX))
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' has unknown dtype %u",
                        what, info.name.c_str(), unsigned(dtype));
    static_assert(uint8_t(artifact::DType::MAX) == KILN_DTYPE_F8E5M2,
                  "the manifest's dtypes are the API's");
    info.dtype = static_cast<kiln_dtype_t>(dtype);
    size_t elementSize = kiln_dtype_size(info.dtype);
    if (!aligned(tensor->shape()))
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' has a misaligned shape",
                        what, info.name.c_str());
    if (tensor->shape()->size() > kMaxRank)
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: %s '%s' has rank %u (at most %zu is allowed)", what,
                        info.name.c_str(), tensor->shape()->size(), kMaxRank);
    size_t count = 1;
    bool symbolic = tensor->dims() && tensor->dims()->size() != 0;
    for (int64_t dim : *tensor->shape()) {
      if (dim < (symbolic ? -1 : 0) || (dim >= 0 && !checkedMul(count, size_t(dim), count)))
        return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' has an invalid shape",
                          what, info.name.c_str());
      info.shape.push_back(dim);
    }
    if (symbolic) {
      if (kiln_status_t status = readDims(tensor, what, symbols, info))
        return status;
    } else if (!checkedMul(count, elementSize, info.byteSize)) {
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %s '%s' is too large", what,
                        info.name.c_str());
    }
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
  if (rank < 1 || rank > 5 || map->strides()->size() != rank - 1 || map->box()->size() != rank ||
      !aligned(map->dims()) || !aligned(map->strides()))
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
  // Programs of the model's symbols, `count` of them (any, for 0).
  auto readPrograms = [&](const flatbuffers::Vector<flatbuffers::Offset<artifact::Dim>> *in,
                          size_t count, std::vector<std::vector<int64_t>> &programs) {
    if (!in)
      return true;
    if (in->size() != count)
      return false;
    for (const artifact::Dim *dim : *in) {
      if (!aligned(dim->program()) ||
          !format::validDims({dim->program()->data(), dim->program()->size()},
                             model->symbols.size()))
        return false;
      programs.emplace_back(dim->program()->begin(), dim->program()->end());
    }
    return true;
  };
  if (!readPrograms(in->grid_dims(), 3, out.gridDims))
    return corrupt("an invalid program for its grid");
  for (int i = 0; i < 3; ++i) {
    out.grid[i] = in->grid()->Get(i);
    out.block[i] = in->block()->Get(i);
    if ((out.grid[i] == 0 && out.gridDims.empty()) || out.block[i] == 0)
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
      if (!readPrograms(arg->dims(), 1, result.dims) ||
          (!result.dims.empty() && result.width != 4 && result.width != 8))
        return corrupt("an invalid program for a scalar argument");
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
        !aligned(arg->sizes()) || !aligned(arg->strides()) || arg->byte_offset() > limit)
      return corrupt("a buffer argument outside its memory");
    result.index = arg->index();
    result.byteOffset = arg->byte_offset();
    result.offset = arg->offset();
    result.sizes.assign(arg->sizes()->begin(), arg->sizes()->end());
    result.strides.assign(arg->strides()->begin(), arg->strides()->end());
    if (!readPrograms(arg->dims(), 2 + 2 * result.sizes.size(), result.dims))
      return corrupt("invalid programs for a buffer argument");
    if (!result.dims.empty() && arg->tensor_map())
      return corrupt("a tensor map over a buffer a run sizes");
    if (const artifact::TensorMap *map = arg->tensor_map())
      if (!readTensorMap(map, limit, result))
        return corrupt("a tensor map outside its buffer's memory or beyond what TMA can map");
  }
  return nullptr;
}

/// Reads each plan: its memory, its weights' place in the file, and on a
/// GPU its launches.
///
/// Weight blocks lie where the writer puts them (format.h): a plan's is
/// either one an earlier plan names, or the next block, at the first
/// aligned offset after `blocksEnd` (which it advances).
kiln_status_t readPlans(const artifact::Model *manifest, size_t fileSize, uint64_t &blocksEnd,
                        kiln_model_t *model) {
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  for (const artifact::Plan *in : *manifest->plans()) {
    size_t index = model->plans.size();
    Plan &plan = model->plans.emplace_back();
    plan.arenaBytes = in->arena_bytes();
    plan.weightsSize = in->weights_size();
    std::pair<uint64_t, uint64_t> block(in->weights_offset(), in->weights_size());
    bool shared = std::find(blocks.begin(), blocks.end(), block) != blocks.end();
    if (!shared && block.first != alignTo(blocksEnd, KILN_WEIGHTS_ALIGNMENT))
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: plan %zu's weights_offset %llu is not where its "
                        "weights lie (%llu)",
                        index, (unsigned long long)block.first,
                        (unsigned long long)alignTo(blocksEnd, KILN_WEIGHTS_ALIGNMENT));
    if (!inFile(block.first, block.second, fileSize))
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: plan %zu's weights (%llu bytes at %llu) run past the "
                        "end of the file",
                        index, (unsigned long long)block.second, (unsigned long long)block.first);
    if (!shared) {
      blocks.push_back(block);
      blocksEnd = block.first + block.second;
    }
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

/// Checks the header, the digest and, when `options` names trusted keys,
/// the signature: all before anything else in the file is read.
kiln_status_t verifyHeader(const uint8_t *data, size_t size, const LoadOptions &options,
                           kiln_file_header_t &header) {
  if (size < KILN_HEADER_SIZE)
    return makeStatus(KILN_STATUS_DATA_LOSS, "not a kiln artifact: only %zu bytes", size);
  memcpy(&header, data, sizeof(header));
  if (memcmp(header.magic, KILN_MAGIC, 8) != 0)
    return makeStatus(KILN_STATUS_DATA_LOSS, "not a kiln artifact (wrong magic number)");
  if (header.format_version > KILN_FORMAT_VERSION)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "the artifact has format version %u; this runtime reads version %u",
                      header.format_version, KILN_FORMAT_VERSION);
  if (header.format_version < KILN_FORMAT_VERSION)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "the artifact has format version %u, from before artifacts had a SHA-256 "
                      "digest; this runtime reads version %u: compile the model again",
                      header.format_version, KILN_FORMAT_VERSION);
  if (header.header_size != KILN_HEADER_SIZE)
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: header_size is %u, not %u",
                      header.header_size, KILN_HEADER_SIZE);
  if (header.file_size != size)
    return makeStatus(KILN_STATUS_DATA_LOSS,
                      "truncated or padded artifact: its header says %llu bytes, there are %zu",
                      (unsigned long long)header.file_size, size);
  uint8_t digest[KILN_DIGEST_BYTES];
  if (kiln_artifact_digest(data, size, digest) != 0)
    return makeStatus(KILN_STATUS_INTERNAL, "cannot compute the artifact's SHA-256 digest");
  if (memcmp(digest, header.digest, KILN_DIGEST_BYTES) != 0)
    return makeStatus(KILN_STATUS_DATA_LOSS,
                      "corrupt artifact: its SHA-256 digest does not match its bytes");

  static const uint8_t zeros[sizeof(header.reserved)] = {};
  static_assert(sizeof(zeros) >= KILN_SIGNATURE_BYTES, "zeros for every field");
  bool isSigned = memcmp(header.signer, zeros, KILN_KEY_BYTES) != 0;
  if (isSigned && !kiln_signature_valid(digest, header.signer, header.signature))
    return makeStatus(KILN_STATUS_PERMISSION_DENIED,
                      "the artifact's signature does not verify (signer %s)",
                      keyHex(header.signer).c_str());
  if (!options.trustedKeys.empty()) {
    if (!isSigned)
      return makeStatus(KILN_STATUS_PERMISSION_DENIED,
                        "the artifact is not signed, and only artifacts signed by a trusted key "
                        "may load");
    bool trusted = false;
    for (const TrustedKey &key : options.trustedKeys)
      trusted |= memcmp(key.data(), header.signer, KILN_KEY_BYTES) == 0;
    if (!trusted)
      return makeStatus(KILN_STATUS_PERMISSION_DENIED,
                        "the artifact is signed by %s, which is not a trusted key",
                        keyHex(header.signer).c_str());
  } else if (!isSigned && memcmp(header.signature, zeros, KILN_SIGNATURE_BYTES) != 0) {
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: a signature without a signer");
  }
  if (memcmp(header.reserved0, zeros, sizeof(header.reserved0)) != 0 ||
      memcmp(header.reserved, zeros, sizeof(header.reserved)) != 0)
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: reserved header bytes are set");
  if (header.manifest_offset != KILN_HEADER_SIZE || header.manifest_size == 0 ||
      !inFile(header.manifest_offset, header.manifest_size, size))
    return makeStatus(KILN_STATUS_DATA_LOSS,
                      "corrupt artifact: the manifest (%llu bytes at %llu) is not where it lies "
                      "(right after the header) or runs past the end of the file",
                      (unsigned long long)header.manifest_size,
                      (unsigned long long)header.manifest_offset);
  if (header.manifest_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the manifest is too large");
  return nullptr;
}

/// Reads the code sections, which lie where the writer puts them (format.h):
/// each at the first aligned offset after the one before, each plan's
/// together, plans in order, every plan with code. Sets `end` to the end of
/// the last.
kiln_status_t readCode(const artifact::Model *manifest, const uint8_t *data, size_t size,
                       uint64_t &end, kiln_model_t *model) {
  using artifact::CodeKind;
  uint32_t plans = manifest->plans()->size(), plan = 0;
  for (const artifact::Code *code : *manifest->code()) {
    size_t index = model->code.size();
    auto corrupt = [&](const char *what) {
      return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: code section %zu (%s) %s", index,
                        code->target()->c_str(), what);
    };
    if (uint8_t(code->kind()) > uint8_t(CodeKind::MAX))
      return corrupt("has an unknown kind");
    if (code->offset() != alignTo(end, KILN_SECTION_ALIGNMENT) || code->size() == 0)
      return corrupt("is not where its code lies, or is empty");
    if (!inFile(code->offset(), code->size(), size))
      return corrupt("runs past the end of the file");
    bool samePlan = index > 0 && code->plan() == plan;
    if (!(index == 0 ? code->plan() == 0 : samePlan || code->plan() == plan + 1) ||
        code->plan() >= plans)
      return corrupt("names a plan out of order or out of range");
    if (samePlan && model->code.back().target != code->target()->str())
      return corrupt("has another target than its plan's other code");
    plan = code->plan();
    end = code->offset() + code->size();
    std::string_view target = code->target()->string_view();
    if (!deviceRuns(code->kind(), target))
      return corrupt("is of a kind its target cannot run");
    model->code.push_back({code->kind(), code->target()->str(), data + code->offset(),
                           size_t(code->size()), code->plan()});
    if (std::find(model->targets.begin(), model->targets.end(), target) == model->targets.end())
      model->targets.emplace_back(target);
  }
  if (model->code.empty())
    return makeStatus(KILN_STATUS_UNAVAILABLE, "the artifact holds no code");
  if (plan + 1 != plans)
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %u plans, but code for %u of them",
                      plans, plan + 1);
  return nullptr;
}

/// Verifies the artifact in `model->storage` and fills in the model; loads
/// its host code if `options` asks.
kiln_status_t verifyAndLoad(kiln_model_t *model, const LoadOptions &options) {
  const uint8_t *data = model->storage.data;
  size_t size = model->storage.size;
  kiln_file_header_t header;
  if (kiln_status_t status = verifyHeader(data, size, options, header))
    return status;

  const uint8_t *manifestData = data + header.manifest_offset;
  flatbuffers::Verifier verifier(manifestData, header.manifest_size);
  if (!artifact::VerifyModelBuffer(verifier))
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the manifest does not verify");
  const artifact::Model *manifest = artifact::GetModel(manifestData);
  if (kiln_status_t status = readSymbols(manifest, model))
    return status;
  if (kiln_status_t status =
          readTensors(manifest->inputs(), "input", model->symbols, model->inputs))
    return status;
  if (kiln_status_t status =
          readTensors(manifest->outputs(), "output", model->symbols, model->outputs))
    return status;
  // A run learns each symbol's value from an input's dimension.
  for (size_t index = 0; index < model->symbols.size(); ++index) {
    bool given = false;
    for (const TensorInfo &input : model->inputs)
      for (const std::vector<int64_t> &dim : input.dims)
        given = given || format::bareSymbol({dim.data(), dim.size()}) == index;
    if (!given)
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: symbol '%s' is no input's dimension by itself",
                        model->symbols[index].name.c_str());
  }
  uint64_t end = header.manifest_offset + header.manifest_size;
  if (kiln_status_t status = readCode(manifest, data, size, end, model))
    return status;
  if (kiln_status_t status = readPlans(manifest, size, end, model))
    return status;
  if (alignTo(end, 8) != size)
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: %llu bytes follow the last section",
                      (unsigned long long)(size - end));

  std::vector<const CodeSection *> host;
  for (const CodeSection &code : model->code) {
    if (code.kind != artifact::CodeKind::HostSharedObject)
      continue;
    for (const CodeSection *other : host)
      if (other->target == code.target)
        return makeStatus(KILN_STATUS_DATA_LOSS,
                          "corrupt artifact: two sections of host code for %s",
                          code.target.c_str());
    if (!model->plans[code.plan].launches.empty())
      return makeStatus(KILN_STATUS_DATA_LOSS,
                        "corrupt artifact: the host code's plan launches GPU kernels");
    host.push_back(&code);
  }
  if (!options.loadCode)
    return nullptr;
  model->hasCode = true;
  if (host.empty()) {
    model->hostUnavailable = "the artifact has no code for the host CPU (it holds code for " +
                             codeTargets(*model) + "); compile with --target host";
    return nullptr;
  }
  return host::loadCode(*model, host);
}

kiln_status_t finishLoad(std::unique_ptr<kiln_model_t> model, const LoadOptions &options,
                         kiln_model_t **out_model) {
  if (kiln_status_t status = verifyAndLoad(model.get(), options))
    return status;
  *out_model = model.release();
  return nullptr;
}

} // namespace

kiln_status_t kiln::loadFile(const char *path, const LoadOptions &options,
                             kiln_model_t **out_model) {
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
  kiln_status_t status = finishLoad(std::move(model), options, out_model);
  if (status && status != outOfMemory())
    status->message = std::string(path) + ": " + status->message;
  return status;
}

kiln_status_t kiln::loadMemory(const void *data, size_t size, const LoadOptions &options,
                               kiln_model_t **out_model) {
  auto model = std::unique_ptr<kiln_model_t>(new (std::nothrow) kiln_model_t);
  void *copy = nullptr;
  if (!model || posix_memalign(&copy, KILN_WEIGHTS_ALIGNMENT, size ? size : 1) != 0)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory copying a %zu-byte artifact",
                      size);
  memcpy(copy, data, size);
  model->storage.data = static_cast<uint8_t *>(copy);
  model->storage.size = size;
  return finishLoad(std::move(model), options, out_model);
}
