// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The interface every device a session runs on implements (host/, cuda/,
// hip/), and the one place that names the devices (Device.cpp): which one
// opens by a name, which one runs a code section. kiln_session_* and the
// loader call these and never ask which driver is behind them.

#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include "runtime/src/Model.h"

#include <memory>
#include <string_view>
#include <vector>

namespace kiln {

/// A model opened on one device for one session. Destroying it waits for
/// the run in flight, if any, and frees what the session had there.
class Device {
public:
  virtual ~Device() = default;

  /// What the session runs on: "host", "cuda:0 (NVIDIA H200, sm_90, cubin
  /// for sm_90)".
  virtual const char *describe() const = 0;
  /// The target of the code it runs: "x86-64-v3", "sm_90a".
  virtual const char *target() const = 0;
  /// The threads a run uses on the host, the caller's among them; 0 where
  /// runs do not use the caller's threads.
  virtual unsigned threads() const = 0;

  /// Starts a run: `inputs` and `outputs` hold a pointer per model input
  /// and output, in order, each of its size in this run, and `symbols`
  /// each symbol's value, checked against its range. The inputs have been
  /// read when it returns (the caller may reuse them); the outputs are
  /// written once `wait` returns without error. A run still in flight is
  /// waited for first: one runs at a time.
  virtual kiln_status_t enqueue(const std::vector<const void *> &inputs,
                                const std::vector<void *> &outputs,
                                const std::vector<int64_t> &symbols) = 0;
  /// Waits for the run in flight, if any; its error, if it had one.
  virtual kiln_status_t wait() = 0;

  /// How long the last finished run's kernels took, as the device timed
  /// them, in milliseconds; 0 where the device does not time them.
  virtual double kernelMilliseconds() const = 0;
  /// Each kernel's milliseconds in the last finished run, the first `count`
  /// written to `milliseconds`; the number of kernels (0 where the device
  /// does not profile).
  virtual size_t kernelProfile(double *milliseconds, size_t count) const = 0;
};

/// What a session asks of its device (kiln_session_options_t, read for its
/// API version).
struct DeviceOptions {
  unsigned threads = 0; ///< on the host; 0 is one per CPU
  bool useGraph = true; ///< replay the plan as one graph on a GPU
  bool profile = false; ///< time each kernel
};

/// Whether a device of this runtime runs code of `kind` built for `target`
/// (x86-64-v3, sm_90, gfx942): each device says which kinds and targets
/// are its own, and the loader refuses a code section no device can run.
bool deviceRuns(artifact::CodeKind kind, std::string_view target);

/// Opens `model` on the device named `name` ("host", "cuda", "cuda:N").
/// Errors: INVALID_ARGUMENT (a malformed name), UNAVAILABLE (a device this
/// runtime or machine lacks, or no code in the model for it),
/// RESOURCE_EXHAUSTED, INTERNAL (the driver failed).
kiln_status_t openDevice(kiln_model_t *model, const char *name, const DeviceOptions &options,
                         std::unique_ptr<Device> &out);

} // namespace kiln

#endif // KILN_RUNTIME_DEVICE_H
