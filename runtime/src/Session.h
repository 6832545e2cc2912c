// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A session: a model opened on a device, and a run's tensors bound to the
// model's inputs and outputs.

#ifndef KILN_RUNTIME_SESSION_H
#define KILN_RUNTIME_SESSION_H

#include "runtime/src/Device.h"

#include <memory>
#include <utility>
#include <vector>

struct kiln_session_s {
  /// Holds a reference to `model` while it lives.
  explicit kiln_session_s(kiln_model_t *model) : model(model) { kiln_model_retain(model); }
  kiln_session_s(const kiln_session_s &) = delete;
  kiln_session_s &operator=(const kiln_session_s &) = delete;
  ~kiln_session_s();

  kiln_model_t *model;
  std::unique_ptr<kiln::Device> device;
  /// Per model output, the buffer the session allocated for it (or null)
  /// and its bytes: the next run writes that output there again unless the
  /// caller passes it in or it is too small, and the session frees it at
  /// its end.
  std::vector<void *> ownedOutputs;
  std::vector<size_t> ownedBytes;
  /// The last run's symbol values, and each output's shape and bytes in it
  /// (held here so that a run allocates nothing once they have their size).
  std::vector<int64_t> symbols;
  std::vector<std::vector<int64_t>> outputShapes;
  std::vector<size_t> outputBytes;
  /// While a run binds its inputs: each symbol's value, the input and
  /// dimension that gave it, and each input's shape and bytes.
  std::vector<std::pair<size_t, size_t>> symbolSources;
  std::vector<std::vector<int64_t>> inputShapes;
  std::vector<size_t> inputBytes;
  /// Buffers the session allocated that the last run was given (an input
  /// or an output written in place): freed after a run that is not.
  std::vector<std::pair<void *, size_t>> retiredOutputs;
};

namespace kiln {

/// kiln_session_run, and kiln_session_run_async when not `wait`: checks the
/// tensors against the model, allocates the outputs asked for without a
/// buffer, and starts the run on the session's device.
kiln_status_t run(kiln_session_t *session, const kiln_tensor_t *inputs, size_t input_count,
                  kiln_tensor_t *outputs, size_t output_count, bool wait);

} // namespace kiln

#endif // KILN_RUNTIME_SESSION_H
