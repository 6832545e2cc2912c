// The CUDA device: kiln's GPU plans run through the CUDA driver API, which is
// opened with dlopen on first use, so the runtime needs no CUDA to build or
// load, and the host device works on machines without a driver or a GPU.

#ifndef KILN_RUNTIME_CUDA_H
#define KILN_RUNTIME_CUDA_H

#include "Model.h"

namespace kiln::cuda {

class Session;

/// Opens a session on CUDA device `ordinal`: loads the model's code for the
/// device's architecture (a cubin built for it, else PTX for the driver to
/// compile), uploads the weights (once per model and device), allocates the
/// session's memory in one piece and, with `useGraph`, captures the plan as
/// a CUDA graph. With `profile`, every run records an event before each
/// kernel (the plan runs kernel by kernel).
kiln_status_t createSession(kiln_model_t *model, int ordinal, bool useGraph, bool profile,
                            Session **out);
void destroySession(Session *session);

/// What the session runs on: "cuda:0 (NVIDIA H200, sm_90, cubin)".
const char *describe(const Session *session);
/// The target of the code it runs: "sm_90a".
const char *target(const Session *session);

/// Queues a run on the session's stream and returns: the inputs are copied
/// to pinned staging memory (the caller may reuse them at once), then to
/// the device; the plan runs; the outputs come back to staging memory.
/// `inputs` and `outputs` hold a pointer per model input and output, in
/// order. A run still queued is waited for first: one runs at a time.
kiln_status_t enqueue(Session *session, const std::vector<const void *> &inputs,
                      const std::vector<void *> &outputs);
/// Waits for the queued run and copies its outputs where `enqueue` was
/// told; its error, if any.
kiln_status_t wait(Session *session);

/// How long the last run's kernels took on the GPU (CUDA events around
/// them), in milliseconds.
double kernelMilliseconds(const Session *session);

/// With `profile`: each kernel's milliseconds in the last run, the first
/// `count` of them written to `milliseconds`; the number of kernels (0
/// without `profile` or before the first run).
size_t kernelProfile(const Session *session, double *milliseconds, size_t count);

} // namespace kiln::cuda

#endif // KILN_RUNTIME_CUDA_H
