// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/gpu/LaunchParams.h"

#include "runtime/format/DimProgram.h"
#include "runtime/src/Status.h"

#include <algorithm>
#include <climits>

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

kiln_status_t layOutParams(const std::vector<Launch> &launches, const DeviceBuffers &buffers,
                           const TensorMapAddress &tensorMap, LaunchParams &out) {
  size_t count = 0;
  for (const Launch &launch : launches)
    for (const LaunchArg &arg : launch.args)
      count += arg.base == LaunchArg::Base::Scalar || arg.tensorMap
                   ? 1
                   : 3 + arg.sizes.size() + arg.strides.size();
  out.values.reserve(count); // the pointers below stay valid
  for (size_t i = 0; i < launches.size(); ++i) {
    std::vector<void *> &pointers = out.pointers.emplace_back();
    auto push = [&](uint64_t value) {
      out.values.push_back(value);
      pointers.push_back(&out.values.back());
    };
    for (const LaunchArg &arg : launches[i].args) {
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

void updateParams(const std::vector<Launch> &launches, const DeviceBuffers &buffers,
                  LaunchParams &params) {
  uint64_t *value = params.values.data();
  for (const Launch &launch : launches)
    for (const LaunchArg &arg : launch.args) {
      if (arg.base == LaunchArg::Base::Scalar) {
        *value++ = arg.bits;
        continue;
      }
      if (arg.tensorMap) {
        ++value;
        continue;
      }
      uint64_t address = addressOf(buffers, arg);
      *value++ = address;
      *value++ = address;
      *value++ = uint64_t(arg.offset);
      for (int64_t size : arg.sizes)
        *value++ = uint64_t(size);
      for (int64_t stride : arg.strides)
        *value++ = uint64_t(stride);
    }
}

kiln_status_t evaluateLaunch(const Launch &launch, size_t index,
                             const std::vector<int64_t> &symbols, Launch &out) {
  auto fail = [&](const char *what) {
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kernel %zu (%s) has no valid %s at these sizes", index,
                      launch.kernel.c_str(), what);
  };
  auto evaluate = [&](const std::vector<int64_t> &program) {
    return format::evaluateDim({program.data(), program.size()}, symbols);
  };
  for (size_t d = 0; d < launch.gridDims.size(); ++d) {
    std::optional<int64_t> blocks = evaluate(launch.gridDims[d]);
    if (!blocks || *blocks < 0 || *blocks > INT32_MAX)
      return fail("grid");
    out.grid[d] = uint32_t(*blocks);
  }
  for (size_t a = 0; a < launch.args.size(); ++a) {
    const LaunchArg &arg = launch.args[a];
    if (arg.dims.empty())
      continue;
    LaunchArg &result = out.args[a];
    std::optional<int64_t> values[2];
    if (arg.base == LaunchArg::Base::Scalar) {
      std::optional<int64_t> value = evaluate(arg.dims[0]);
      if (!value || (arg.width == 4 && (*value < INT32_MIN || *value > UINT32_MAX)))
        return fail("scalar argument");
      result.bits = uint64_t(*value) & (arg.width == 4 ? 0xffffffffull : ~0ull);
      continue;
    }
    size_t rank = arg.sizes.size();
    for (size_t f = 0; f < 2; ++f)
      values[f] = evaluate(arg.dims[f]);
    if (!values[0] || *values[0] < 0 || !values[1] || *values[1] < 0)
      return fail("buffer offset");
    result.byteOffset = uint64_t(*values[0]);
    result.offset = *values[1];
    for (size_t d = 0; d < 2 * rank; ++d) {
      std::optional<int64_t> value = evaluate(arg.dims[2 + d]);
      if (!value || *value < 0)
        return fail("buffer size or stride");
      (d < rank ? result.sizes[d] : result.strides[d - rank]) = *value;
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
