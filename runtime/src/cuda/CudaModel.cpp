// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/cuda/CudaModel.h"

#include "runtime/src/Status.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace kiln::cuda {

namespace {

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
const CodeSection *chooseCode(const kiln_model_t *model, int major, int minor) {
  int device = major * 10 + minor;
  const CodeSection *best = nullptr;
  int bestScore = -1;
  for (const CodeSection &code : model->code) {
    if (code.kind != artifact::CodeKind::PTX && code.kind != artifact::CodeKind::Cubin)
      continue;
    auto [arch, specific] = parseArch(code.target);
    if (arch == 0 || arch > device || (specific && arch != device))
      continue;
    bool cubin = code.kind == artifact::CodeKind::Cubin;
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

std::string CudaModel::describeError(int status) const {
  const char *name = nullptr, *text = nullptr;
  d.getErrorName(status, &name);
  d.getErrorString(status, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(status)) + ": " +
         (text ? text : "no description");
}

int CudaModel::prepareFunction(gpu::Handle function, const Launch &launch) {
  // Past 48 KiB a kernel must ask for its dynamic shared memory.
  if (launch.sharedBytes <= 48 * 1024)
    return CUDA_SUCCESS;
  return d.funcSetAttribute(static_cast<CUfunction>(function), kMaxDynamicSharedBytes,
                            int(launch.sharedBytes));
}

kiln_status_t CudaModel::tensorMapsUnavailable() const {
  if (d.tensorMapEncodeTiled)
    return nullptr;
  return makeStatus(
      KILN_STATUS_UNAVAILABLE,
      "%s: the plan's kernels copy with TMA, and the CUDA driver cannot encode tensor "
      "maps (cuTensorMapEncodeTiled, CUDA 12 and later)",
      name.c_str());
}

int CudaModel::encodeTensorMap(void *map, const LaunchArg &arg, gpu::DevicePtr address) {
  uint32_t rank = uint32_t(arg.mapDims.size());
  std::vector<uint32_t> elementStrides(rank, 1);
  // CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B and _128B are 0 to 3.
  int swizzle = arg.swizzle == 128 ? 3 : arg.swizzle == 64 ? 2 : arg.swizzle == 32 ? 1 : 0;
  return d.tensorMapEncodeTiled(static_cast<TensorMap *>(map), kTensorMapFloat32, rank,
                                reinterpret_cast<void *>(address), arg.mapDims.data(),
                                arg.mapStrides.data(), arg.mapBox.data(), elementStrides.data(),
                                /*interleave=*/0, swizzle, kTensorMapL2Promotion256,
                                /*oobFill=*/0);
}

kiln_status_t CudaModel::load(const kiln_model_t &model) {
  int count = 0;
  if (CUresult status = d.deviceGetCount(&count))
    return gpu::failure(*this, status, "cannot count the GPUs");
  if (ordinal >= count)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "device 'cuda:%d' is not available: this machine has %d CUDA GPU%s", ordinal,
                      count, count == 1 ? "" : "s");
  int major = 0, minor = 0;
  char gpuName[128] = "";
  if (CUresult status = d.deviceGet(&device, ordinal))
    return gpu::failure(*this, status, "cannot open the GPU");
  d.deviceGetAttribute(&major, kComputeCapabilityMajor, device);
  d.deviceGetAttribute(&minor, kComputeCapabilityMinor, device);
  d.deviceGetName(gpuName, sizeof(gpuName) - 1, device);
  const CodeSection *code = chooseCode(&model, major, minor);
  if (!code)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cuda:%d (%s) is sm_%d%d, and the artifact has no code it can run (it holds "
                      "code for %s); compile with --target sm_%d%d",
                      ordinal, gpuName, major, minor, codeTargets(model).c_str(), major, minor);
  plan = &model.plans[code->plan];
  target = code->target;
  description = name + " (" + gpuName + ", sm_" + std::to_string(major) + std::to_string(minor) +
                ", " + (code->kind == artifact::CodeKind::Cubin ? "cubin for " : "PTX for ") +
                code->target + ")";

  if (CUresult status = d.primaryCtxRetain(&context, device)) {
    context = nullptr;
    return gpu::failure(*this, status, "cannot create a context");
  }
  gpu::Current current(*this);
  if (!current.ok())
    return makeStatus(KILN_STATUS_INTERNAL, "cuda:%d: cannot make its context current", ordinal);
  // PTX must end in a NUL for the driver; the section holds the text only.
  std::string image(reinterpret_cast<const char *>(code->data), code->size);
  char log[4096] = "";
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferBytes};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  if (CUresult status = d.moduleLoadDataEx(reinterpret_cast<CUmodule *>(&module), image.c_str(), 2,
                                           options, values)) {
    module = nullptr;
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cuda:%d: the driver cannot load the %s for %s: %s%s%s", ordinal,
                      code->kind == artifact::CodeKind::Cubin ? "cubin" : "PTX",
                      code->target.c_str(), describeError(status).c_str(), log[0] ? ": " : "", log);
  }
  return finishLoading(model, *code);
}

CudaModel::~CudaModel() {
  if (!context)
    return;
  release();
  d.primaryCtxRelease(device);
}

} // namespace kiln::cuda
