// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host code of a model: an x86-64 shared object in the artifact, checked
// against this CPU and loaded when the model loads.

#ifndef KILN_RUNTIME_HOST_HOSTCODE_H
#define KILN_RUNTIME_HOST_HOSTCODE_H

#include "runtime/src/Model.h"

namespace kiln::host {

/// The host code, loaded: the model's state on the device "host".
class HostCode : public DeviceModel {
public:
  HostCode() = default;
  HostCode(const HostCode &) = delete;
  HostCode &operator=(const HostCode &) = delete;
  ~HostCode() override;

  /// Loads the shared object in `size` bytes at `code`, once.
  kiln_status_t load(const uint8_t *code, size_t size);

  /// kiln_entry: takes the inputs, the outputs, the arena, the weights and
  /// a kiln_host_context_t.
  void (*entry)(void **args) = nullptr;
  /// What the code was compiled for (runtime/format/PlanRecord.h).
  const char *record = nullptr;

private:
  void *library = nullptr;
  /// The memfd holding the code stays open while the library is loaded:
  /// its /proc/self/fd path names this library alone, so another model's
  /// dlopen cannot be handed this one.
  int fd = -1;
};

/// Loads, of `code` (the model's host code, one section per x86-64 level),
/// the section for the highest level this CPU runs, as the model's state on
/// "host", and makes its plan the model's `hostPlan`; refuses it (DATA_LOSS)
/// when the plan the manifest describes is not the one the code records. The environment
/// variable KILN_HOST_LEVEL (x86-64-v2, -v3, -v4) lowers the level assumed.
/// When the CPU runs none: UNAVAILABLE if the artifact holds no other code,
/// else `model.hostUnavailable` says why and the GPU code may still run.
kiln_status_t loadCode(kiln_model_t &model, const std::vector<const CodeSection *> &code);

} // namespace kiln::host

#endif // KILN_RUNTIME_HOST_HOSTCODE_H
