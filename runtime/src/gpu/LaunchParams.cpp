// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/gpu/LaunchParams.h"

#include <algorithm>

namespace kiln::gpu {

uint64_t addressOf(const DeviceBuffers &buffers, const LaunchArg &arg) {
  switch (arg.base) {
  case LaunchArg::Base::Input:
    return buffers.inputs[arg.index] + arg.byteOffset;
  case LaunchArg::Base::Output:
    return buffers.outputs[arg.index] + arg.byteOffset;
  case LaunchArg::Base::Arena:
    return buffers.arena + arg.byteOffset;
  case LaunchArg::Base::Weights:
    return buffers.weights + arg.byteOffset;
  case LaunchArg::Base::Scalar:
    break;
  }
  return 0;
}

kiln_status_t layOutParams(const Plan &plan, const DeviceBuffers &buffers,
                           const TensorMapAddress &tensorMap, LaunchParams &out) {
  size_t count = 0;
  for (const Launch &launch : plan.launches)
    for (const LaunchArg &arg : launch.args)
      count += arg.base == LaunchArg::Base::Scalar || arg.tensorMap
                   ? 1
                   : 3 + arg.sizes.size() + arg.strides.size();
  out.values.reserve(count); // the pointers below stay valid
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    std::vector<void *> &pointers = out.pointers.emplace_back();
    auto push = [&](uint64_t value) {
      out.values.push_back(value);
      pointers.push_back(&out.values.back());
    };
    for (const LaunchArg &arg : plan.launches[i].args) {
      if (arg.base == LaunchArg::Base::Scalar) {
        push(arg.bits);
        continue;
      }
      if (arg.tensorMap) {
        uint64_t address = 0;
        if (kiln_status_t status = tensorMap(i, arg, address))
          return status;
        push(address);
        continue;
      }
      uint64_t address = addressOf(buffers, arg);
      push(address);
      push(address);
      push(uint64_t(arg.offset));
      for (int64_t size : arg.sizes)
        push(uint64_t(size));
      for (int64_t stride : arg.strides)
        push(uint64_t(stride));
    }
  }
  return nullptr;
}

size_t countTensorMaps(const Plan &plan) {
  size_t count = 0;
  for (const Launch &launch : plan.launches)
    count += std::count_if(launch.args.begin(), launch.args.end(),
                           [](const LaunchArg &arg) { return arg.tensorMap; });
  return count;
}

} // namespace kiln::gpu
