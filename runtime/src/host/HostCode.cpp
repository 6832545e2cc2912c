// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/host/HostCode.h"

#include "runtime/format/PlanRecord.h"
#include "runtime/format/format.h"
#include "runtime/src/Status.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::host {

namespace {

/// The level an x86-64-vN name needs (x86-64 alone is 1).
int levelOf(const std::string &target) {
  return target.rfind("x86-64-v", 0) == 0 ? atoi(target.c_str() + 8) : 1;
}

/// The x86-64 micro-architecture level of the running CPU, or the lower
/// one KILN_HOST_LEVEL names.
int hostLevel() {
  __builtin_cpu_init();
  int level = __builtin_cpu_supports("x86-64-v4")   ? 4
              : __builtin_cpu_supports("x86-64-v3") ? 3
              : __builtin_cpu_supports("x86-64-v2") ? 2
                                                    : 1;
  if (const char *cap = getenv("KILN_HOST_LEVEL"))
    level = std::min(level, levelOf(cap));
  return level;
}

} // namespace

// The shared object is written to an anonymous file and opened from there,
// so nothing touches the file system.
kiln_status_t HostCode::load(const uint8_t *code, size_t size) {
  fd = memfd_create("kiln-host-code", MFD_CLOEXEC);
  if (fd < 0)
    return makeStatus(KILN_STATUS_INTERNAL, "cannot create memory for the host code: %s",
                      strerror(errno));
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
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return makeStatus(KILN_STATUS_DATA_LOSS, "cannot load the host code: %s", dlerror());
  entry = reinterpret_cast<void (*)(void **)>(dlsym(library, "kiln_entry"));
  if (!entry)
    return makeStatus(KILN_STATUS_DATA_LOSS, "the host code has no kiln_entry");
  record = static_cast<const char *>(dlsym(library, KILN_PLAN_RECORD_SYMBOL));
  if (!record)
    return makeStatus(KILN_STATUS_DATA_LOSS, "the host code has no %s", KILN_PLAN_RECORD_SYMBOL);
  return nullptr;
}

HostCode::~HostCode() {
  if (library)
    dlclose(library);
  if (fd >= 0)
    close(fd);
}

kiln_status_t loadCode(kiln_model_t &model, const std::vector<const CodeSection *> &sections) {
  // x86-64-vN names the micro-architecture level the code needs: the
  // highest this CPU runs wins.
  int level = hostLevel();
  const CodeSection *chosen = nullptr;
  std::string targets;
  for (const CodeSection *section : sections) {
    targets += (targets.empty() ? "" : ", ") + section->target;
    if (levelOf(section->target) <= level &&
        (!chosen || levelOf(section->target) > levelOf(chosen->target)))
      chosen = section;
  }
  if (!chosen) {
    std::string reason = "the host code was compiled for " + targets +
                         ", which this CPU does not support (it is x86-64-v" +
                         std::to_string(level) +
                         "); compile with --host-cpu=native or an older level";
    // Code for a GPU may still run.
    if (model.code.size() == sections.size())
      return makeStatus(KILN_STATUS_UNAVAILABLE, "%s", reason.c_str());
    model.hostUnavailable = reason;
    return nullptr;
  }
  const CodeSection &code = *chosen;
  auto make = [&](std::unique_ptr<DeviceModel> &out) -> kiln_status_t {
    auto host = std::make_unique<HostCode>();
    if (kiln_status_t status = host->load(code.data, code.size))
      return status;
    out = std::move(host);
    return nullptr;
  };
  DeviceModel *loaded = nullptr;
  if (kiln_status_t status = deviceModel(model, "host", make, &loaded))
    return status;
  std::string mismatch =
      format::recordMismatch(manifestRecord(model, code), static_cast<HostCode *>(loaded)->record);
  if (!mismatch.empty())
    return makeStatus(KILN_STATUS_DATA_LOSS,
                      "corrupt artifact: the host code for %s does not match the manifest: %s",
                      code.target.c_str(), mismatch.c_str());
  model.hostPlan = int(code.plan);
  model.hostTarget = code.target;
  return nullptr;
}

} // namespace kiln::host
