// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a GPU plan's launch arguments become kernel parameters. The layout is
// the lowered kernels' (MLIR's memref descriptors), not a driver's, so every
// GPU device lays out its parameters here and only encodes what is its own
// (a CUDA tensor map).

#ifndef KILN_RUNTIME_GPU_LAUNCHPARAMS_H
#define KILN_RUNTIME_GPU_LAUNCHPARAMS_H

#include "runtime/src/Model.h"

#include <functional>

namespace kiln::gpu {

/// Where a session's memory lies on the device.
struct DeviceBuffers {
  uint64_t arena = 0, weights = 0;
  std::vector<uint64_t> inputs, outputs; ///< one per model input and output
};

/// The device address of a buffer argument's first byte.
uint64_t addressOf(const DeviceBuffers &buffers, const LaunchArg &arg);

/// Every launch's parameters, and per launch a pointer to each of them, as
/// a driver's launch call takes them. Not copied: the pointers point into
/// `values`.
struct LaunchParams {
  LaunchParams() = default;
  LaunchParams(const LaunchParams &) = delete;
  LaunchParams &operator=(const LaunchParams &) = delete;

  std::vector<uint64_t> values;
  std::vector<std::vector<void *>> pointers;
};

/// Gives the device address of the tensor map a launch's argument takes,
/// encoded by the driver; its error, if it cannot.
using TensorMapAddress =
    std::function<kiln_status_t(size_t launch, const LaunchArg &arg, uint64_t &address)>;

/// Lays out the parameters of every one of `launches` (a plan's), in order: a buffer
/// as its descriptor (pointer, pointer, offset, sizes, strides), a scalar as
/// its bits (little-endian, so a narrower parameter reads the low bytes), a
/// tensor map's argument as the address `tensorMap` gives, asked for in the
/// order of the arguments.
kiln_status_t layOutParams(const std::vector<Launch> &launches, const DeviceBuffers &buffers,
                           const TensorMapAddress &tensorMap, LaunchParams &out);

/// The tensor maps `plan`'s launches take.
size_t countTensorMaps(const Plan &plan);

/// `launch` at a run's `symbols`: each field a program gives (Launch's
/// gridDims, LaunchArg's dims) evaluated into `out`, a copy of `launch`
/// (so nothing is allocated). A grid dimension of 0 means the launch has
/// nothing to do at these sizes. Fails, naming the launch `index`, when a
/// value overflows or lies outside what its field holds.
kiln_status_t evaluateLaunch(const Launch &launch, size_t index,
                             const std::vector<int64_t> &symbols, Launch &out);

/// Rewrites, in place, the parameters layOutParams laid out for `launches`
/// (the plan's, as evaluateLaunch gives them at a run's sizes): the same
/// layout, each buffer's and scalar's new value; tensor maps, which no
/// symbolic field reaches, keep their addresses.
void updateParams(const std::vector<Launch> &launches, const DeviceBuffers &buffers,
                  LaunchParams &params);

} // namespace kiln::gpu

#endif // KILN_RUNTIME_GPU_LAUNCHPARAMS_H
