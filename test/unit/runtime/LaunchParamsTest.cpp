// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The GPU launch-parameter layout every GPU device shares: a buffer as its
// memref descriptor at its device address, a scalar as its bits, a tensor
// map as the address its driver gives, each launch's pointers into one
// array of values; a symbolic launch's fields evaluated per run and
// rewritten in place.

#include "runtime/src/gpu/LaunchParams.h"

#include <catch2/catch.hpp>

#include <string>

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
  REQUIRE(kiln::gpu::layOutParams(plan.launches, buffers, tensorMap, params) == nullptr);

  REQUIRE(params.pointers.size() == 2);
  CHECK(read(params.pointers[0]) == std::vector<uint64_t>{0x3010, 0x3010, 3, 2, 5, 5, 1, 0x2a});
  CHECK(read(params.pointers[1]) == std::vector<uint64_t>{0x9040, 0x9040, 3, 2, 5, 5, 1, 0x8000,
                                                          0x4008, 0x4008, 3, 2, 5, 5, 1});
  CHECK(mapsAsked == std::vector<size_t>{1});
  CHECK(kiln::gpu::countTensorMaps(plan) == 1);
}

namespace {

using Program = std::vector<int64_t>;
constexpr int64_t kConstant = 0, kSymbol = 1, kMul = 3, kCeilDiv = 5;

Program symbol(int64_t index) { return {kSymbol, index}; }
Program constant(int64_t value) { return {kConstant, value}; }
/// batch * 4 ceildiv 256: the blocks of 256 threads over 4 columns a row.
Program blocksOfRows() { return {kSymbol, 0, kConstant, 4, kMul, 0, kConstant, 256, kCeilDiv, 0}; }

/// A launch over `batch` rows of 4 in the arena at 16 bytes a row past
/// the row count `batch` (its scalar): grid, buffer and scalar programs.
kiln::Launch symbolicLaunch() {
  kiln::Launch launch;
  launch.kernel = "rows";
  launch.grid[0] = 0;
  launch.grid[1] = launch.grid[2] = 1;
  launch.gridDims = {blocksOfRows(), constant(1), constant(1)};
  LaunchArg rows = buffer(LaunchArg::Base::Arena, 0, 0);
  rows.sizes = {0, 4};
  rows.strides = {4, 1};
  rows.dims = {{kSymbol, 0, kConstant, 16, kMul, 0},
               constant(0),
               symbol(0),
               constant(4),
               constant(4),
               constant(1)};
  launch.args.push_back(rows);
  LaunchArg count;
  count.width = 4;
  count.dims = {symbol(0)};
  launch.args.push_back(count);
  return launch;
}

} // namespace

TEST_CASE("a symbolic launch is evaluated at each run's sizes, in place",
          "[runtime][gpu][symbolic]") {
  std::vector<kiln::Launch> plan = {symbolicLaunch()};
  std::vector<kiln::Launch> run = plan;
  kiln::gpu::DeviceBuffers buffers;
  buffers.arena = 0x1000;
  auto noMaps = [](size_t, const LaunchArg &, uint64_t &) -> kiln_status_t { return nullptr; };
  kiln::gpu::LaunchParams params;
  REQUIRE(kiln::gpu::layOutParams(plan, buffers, noMaps, params) == nullptr);
  const uint64_t *first = params.values.data();

  for (int64_t batch : {1, 64, 65, 1000}) {
    REQUIRE(kiln::gpu::evaluateLaunch(plan[0], 0, {batch}, run[0]) == nullptr);
    CHECK(run[0].grid[0] == uint32_t((batch * 4 + 255) / 256));
    CHECK(run[0].grid[1] == 1);
    kiln::gpu::updateParams(run, buffers, params);
    // Rewritten where it lies: the pointers the driver is given still hold.
    CHECK(params.values.data() == first);
    uint64_t address = 0x1000 + 16 * uint64_t(batch);
    CHECK(read(params.pointers[0]) ==
          std::vector<uint64_t>{address, address, 0, uint64_t(batch), 4, 4, 1, uint64_t(batch)});
  }
}

TEST_CASE("a symbolic launch refuses values its fields cannot hold", "[runtime][gpu][symbolic]") {
  kiln::Launch plan = symbolicLaunch();
  kiln::Launch run = plan;
  // A 32-bit scalar of 2^33.
  kiln_status_t status = kiln::gpu::evaluateLaunch(plan, 3, {int64_t(1) << 33}, run);
  REQUIRE(status != nullptr);
  CHECK(std::string(kiln_status_message(status)).find("kernel 3 (rows)") != std::string::npos);
  kiln_status_free(status);
  // A grid past 2^31 - 1 blocks.
  plan.args.pop_back();
  status = kiln::gpu::evaluateLaunch(plan, 0, {int64_t(1) << 40}, run);
  REQUIRE(status != nullptr);
  CHECK(std::string(kiln_status_message(status)).find("no valid grid") != std::string::npos);
  kiln_status_free(status);
  // A negative size.
  status = kiln::gpu::evaluateLaunch(plan, 0, {-4}, run);
  REQUIRE(status != nullptr);
  kiln_status_free(status);
}
