// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/host/HostDevice.h"

#include "runtime/format/format.h"
#include "runtime/src/Status.h"
#include "runtime/src/host/HostCode.h"
#include "runtime/src/host/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <new>

#include <sys/mman.h>

namespace kiln::host {

namespace {

/// The context the host code is given, and the profile its kernel_end
/// hook fills: the time from the previous kernel's end (or the run's start)
/// to each kernel's end.
struct ProfiledContext {
  kiln_host_context_t context = {};
  std::vector<double> milliseconds;
  size_t ended = 0; ///< the kernels that reported their end in this run
  std::chrono::steady_clock::time_point last;

  void start() {
    std::fill(milliseconds.begin(), milliseconds.end(), 0.0);
    ended = 0;
    last = std::chrono::steady_clock::now();
  }

  static void kernelEnd(kiln_host_context_t *context, int64_t kernel) {
    auto *self = reinterpret_cast<ProfiledContext *>(context);
    auto now = std::chrono::steady_clock::now();
    // The index comes from the code, the count from the manifest: a kernel
    // the manifest does not list is not recorded.
    if (kernel >= 0 && size_t(kernel) < self->milliseconds.size()) {
      self->milliseconds[size_t(kernel)] +=
          std::chrono::duration<double, std::milli>(now - self->last).count();
      ++self->ended;
    }
    self->last = now;
  }
};
static_assert(offsetof(ProfiledContext, context) == 0, "the code is given &context");

class HostDevice final : public Device {
public:
  HostDevice(const HostCode &code, const Plan &plan, std::string target)
      : code(code), plan(plan), codeTarget(std::move(target)),
        description("host (" + codeTarget + ")") {}
  ~HostDevice() override {
    if (mapping)
      munmap(mapping, mappingBytes);
  }

  const char *describe() const override { return description.c_str(); }
  const char *target() const override { return codeTarget.c_str(); }
  unsigned threads() const override { return pool->threads(); }

  kiln_status_t enqueue(const std::vector<const void *> &inputs, const std::vector<void *> &outputs,
                        const std::vector<int64_t> &symbols) override {
    // The entry point's arguments: inputs, outputs, arena, weights, the
    // symbols' values, context (kept across runs, so a run allocates
    // nothing).
    args.clear();
    for (const void *input : inputs)
      args.push_back(const_cast<void *>(input));
    args.insert(args.end(), outputs.begin(), outputs.end());
    args.push_back(arena);
    args.push_back(const_cast<uint8_t *>(plan.weights));
    for (int64_t symbol : symbols)
      args.push_back(reinterpret_cast<void *>(intptr_t(symbol)));
    args.push_back(&profiled.context);
    if (profiled.context.kernel_end)
      profiled.start();
    code.entry(args.data());
    return nullptr;
  }
  kiln_status_t wait() override { return nullptr; }

  // The host has no device clock apart from the run's own.
  double kernelMilliseconds() const override { return 0.0; }
  // Code compiled before the host reported its kernels runs none of them.
  size_t kernelProfile(double *milliseconds, size_t count) const override {
    if (profiled.ended == 0)
      return 0;
    std::copy_n(profiled.milliseconds.begin(), std::min(count, profiled.milliseconds.size()),
                milliseconds);
    return profiled.milliseconds.size();
  }

  const HostCode &code;
  const Plan &plan;
  std::string codeTarget;
  std::string description;
  /// The activation arena, within `mapping` (allocateArena()).
  void *arena = nullptr;
  void *mapping = nullptr;
  size_t mappingBytes = 0;
  std::unique_ptr<ThreadPool> pool;
  ProfiledContext profiled;
  std::vector<void *> args;
};

/// Maps the activation arena of `bytes`. One of 2 MiB or more lies on
/// 2 MiB boundaries and asks the kernel for huge pages: a model's
/// activations, touched by every kernel, then take a TLB entry per 2 MiB
/// rather than per 4 KiB (ResNet-50's 7.7 MiB: 1 to 2% faster). No swap is
/// reserved for it: a model with symbols has an arena for the symbols'
/// largest values, of which a run at smaller sizes touches only the start,
/// and only the pages touched take memory.
bool allocateArena(HostDevice &device, uint64_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  bool huge = bytes >= kHugePage;
  size_t length = size_t(std::max<uint64_t>(bytes, 1)) + (huge ? kHugePage : 0);
  void *mapping = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED)
    return false;
  device.mapping = mapping;
  device.mappingBytes = length;
  uintptr_t start = reinterpret_cast<uintptr_t>(mapping);
  if (huge) {
    start = (start + kHugePage - 1) / kHugePage * kHugePage;
    // Only advice: without transparent huge pages the arena still works.
    madvise(reinterpret_cast<void *>(start), size_t(bytes), MADV_HUGEPAGE);
  }
  device.arena = reinterpret_cast<void *>(start);
  return true;
}

} // namespace

bool runsCode(artifact::CodeKind kind, std::string_view target) {
  return kind == artifact::CodeKind::HostSharedObject &&
         (target == "x86-64" || target.substr(0, 7) == "x86-64-");
}

kiln_status_t openDevice(kiln_model_t *model, const DeviceOptions &options,
                         std::unique_ptr<Device> &out) {
  if (model->hostPlan < 0)
    return makeStatus(KILN_STATUS_UNAVAILABLE, "%s", model->hostUnavailable.c_str());
  DeviceModel *code = nullptr;
  if (kiln_status_t status = deviceModel(*model, "host", nullptr, &code))
    return status;
  const std::string &target = model->hostTarget;
  const Plan &plan = model->plans[model->hostPlan];
  auto device = std::unique_ptr<HostDevice>(
      new (std::nothrow) HostDevice(static_cast<const HostCode &>(*code), plan, target));
  if (!device)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  unsigned threads = options.threads ? options.threads : ThreadPool::availableThreads();
  if (!allocateArena(*device, plan.arenaBytes)) {
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "cannot allocate the %llu-byte activation arena",
                      (unsigned long long)plan.arenaBytes);
  }
  try {
    device->pool = std::make_unique<ThreadPool>(threads);
  } catch (const std::exception &error) {
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot start %u threads: %s", threads,
                      error.what());
  }
  device->profiled.context.parallel_for = &ThreadPool::parallelFor;
  device->profiled.context.pool = device->pool.get();
  if (options.profile) {
    device->profiled.context.kernel_end = &ProfiledContext::kernelEnd;
    device->profiled.milliseconds.assign(plan.kernels, 0.0);
  }
  out = std::move(device);
  return nullptr;
}

} // namespace kiln::host
