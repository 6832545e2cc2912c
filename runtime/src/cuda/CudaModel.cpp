#include "runtime/src/cuda/CudaModel.h"

#include "runtime/format/PlanRecord.h"
#include "runtime/format/format.h"
#include "runtime/src/Status.h"
#include "runtime/src/cuda/DriverUtil.h"

#include <cstdlib>
#include <cstring>

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

/// Compares the record the loaded code holds (a global of the module) with
/// the manifest's: the launches, their arguments and the buffers' sizes
/// must be what the code was compiled for.
kiln_status_t checkRecord(const kiln_model_t &model, const CodeObject &code, const Driver &d,
                          CUmodule module, int ordinal) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  if (CUresult status = d.moduleGetGlobal(&address, &bytes, module, KILN_PLAN_RECORD_SYMBOL))
    return makeStatus(KILN_STATUS_DATA_LOSS, "corrupt artifact: the %s code has no %s: %s",
                      code.target.c_str(), KILN_PLAN_RECORD_SYMBOL,
                      describeError(d, status).c_str());
  std::string compiled(bytes, '\0');
  if (CUresult status = d.memcpyDtoH(compiled.data(), address, bytes))
    return failure(d, status, ordinal, "cannot read the code's plan record");
  // The global holds the text and its NUL.
  compiled.resize(strnlen(compiled.data(), compiled.size()));
  std::string mismatch = format::recordMismatch(manifestRecord(model, code), compiled);
  if (!mismatch.empty())
    return makeStatus(KILN_STATUS_DATA_LOSS,
                      "corrupt artifact: the %s code does not match the manifest: %s",
                      code.target.c_str(), mismatch.c_str());
  return nullptr;
}

/// Makes the model's state on GPU `ordinal`.
kiln_status_t makeModel(kiln_model_t *model, const Driver &d, int ordinal,
                        std::unique_ptr<DeviceModel> &out) {
  auto state = std::make_unique<CudaModel>();
  state->d = &d;
  state->ordinal = ordinal;
  int count = 0;
  if (CUresult status = d.deviceGetCount(&count))
    return failure(d, status, ordinal, "cannot count the GPUs");
  if (ordinal >= count)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "device 'cuda:%d' is not available: this machine has %d CUDA GPU%s", ordinal,
                      count, count == 1 ? "" : "s");
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
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cuda:%d: the driver cannot load the %s for %s: %s%s%s", ordinal,
                      code->kind == CodeObject::Kind::Cubin ? "cubin" : "PTX", code->target.c_str(),
                      describeError(d, status).c_str(), log[0] ? ": " : "", log);
  }
  if (kiln_status_t status = checkRecord(*model, *code, d, state->module, ordinal))
    return status;
  for (const Launch &launch : state->plan->launches) {
    CUfunction function = nullptr;
    if (CUresult status = d.moduleGetFunction(&function, state->module, launch.kernel.c_str()))
      return makeStatus(KILN_STATUS_DATA_LOSS, "cuda:%d: the code has no kernel '%s': %s", ordinal,
                        launch.kernel.c_str(), describeError(d, status).c_str());
    if (launch.sharedBytes > 48 * 1024)
      if (CUresult status =
              d.funcSetAttribute(function, kMaxDynamicSharedBytes, int(launch.sharedBytes)))
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
  out = std::move(state);
  return nullptr;
}

} // namespace

CudaModel::~CudaModel() {
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

kiln_status_t openModel(kiln_model_t *model, const Driver &d, int ordinal, CudaModel **out) {
  auto make = [&](std::unique_ptr<DeviceModel> &made) {
    return makeModel(model, d, ordinal, made);
  };
  DeviceModel *state = nullptr;
  kiln_status_t status = deviceModel(*model, "cuda:" + std::to_string(ordinal), make, &state);
  *out = static_cast<CudaModel *>(state);
  return status;
}

} // namespace kiln::cuda
