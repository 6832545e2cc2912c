// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The GPU launch-parameter layout every GPU device shares: a buffer as its
// memref descriptor at its device address, a scalar as its bits, a tensor
// map as the address its driver gives, each launch's pointers into one
// array of values.

#include "runtime/src/gpu/LaunchParams.h"

#include <catch2/catch.hpp>

namespace {

using kiln::LaunchArg;

LaunchArg buffer(LaunchArg::Base base, uint32_t index, uint64_t byteOffset) {
  LaunchArg arg;
  arg.base = base;
  arg.index = index;
  arg.byteOffset = byteOffset;
  arg.offset = 3;
  arg.sizes = {2, 5};
  arg.strides = {5, 1};
  return arg;
}

std::vector<uint64_t> read(const std::vector<void *> &pointers) {
  std::vector<uint64_t> values;
  for (void *pointer : pointers)
    values.push_back(*static_cast<uint64_t *>(pointer));
  return values;
}

} // namespace

TEST_CASE("launch parameters are laid out as the lowered kernels take them", "[runtime][gpu]") {
  kiln::Plan plan;
  kiln::Launch &first = plan.launches.emplace_back();
  first.args.push_back(buffer(LaunchArg::Base::Input, 1, 16));
  LaunchArg scalar;
  scalar.width = 4;
  scalar.bits = 0x2a;
  first.args.push_back(scalar);
  kiln::Launch &second = plan.launches.emplace_back();
  second.args.push_back(buffer(LaunchArg::Base::Weights, 0, 64));
  LaunchArg mapped = buffer(LaunchArg::Base::Arena, 0, 0);
  mapped.tensorMap = true;
  second.args.push_back(mapped);
  second.args.push_back(buffer(LaunchArg::Base::Output, 0, 8));

  kiln::gpu::DeviceBuffers buffers;
  buffers.arena = 0x1000;
  buffers.weights = 0x9000;
  buffers.inputs = {0x2000, 0x3000};
  buffers.outputs = {0x4000};
  std::vector<size_t> mapsAsked;
  auto tensorMap = [&](size_t launch, const LaunchArg &arg, uint64_t &address) -> kiln_status_t {
    mapsAsked.push_back(launch);
    address = 0x7000 + kiln::gpu::addressOf(buffers, arg);
    return nullptr;
  };
  kiln::gpu::LaunchParams params;
  REQUIRE(kiln::gpu::layOutParams(plan, buffers, tensorMap, params) == nullptr);

  REQUIRE(params.pointers.size() == 2);
  CHECK(read(params.pointers[0]) == std::vector<uint64_t>{0x3010, 0x3010, 3, 2, 5, 5, 1, 0x2a});
  CHECK(read(params.pointers[1]) == std::vector<uint64_t>{0x9040, 0x9040, 3, 2, 5, 5, 1, 0x8000,
                                                          0x4008, 0x4008, 3, 2, 5, 5, 1});
  CHECK(mapsAsked == std::vector<size_t>{1});
  CHECK(kiln::gpu::countTensorMaps(plan) == 1);
}
