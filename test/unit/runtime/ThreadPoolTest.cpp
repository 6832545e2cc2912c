// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime's thread pool: every index of every job runs exactly once,
// whatever the number of threads, and jobs follow one another cleanly.

#include "runtime/src/host/ThreadPool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

namespace {

struct Counts {
  std::vector<std::atomic<int>> calls;
  explicit Counts(int64_t n) : calls(size_t(n)) {}
};

void count(void *captures, int64_t index) {
  static_cast<Counts *>(captures)->calls[size_t(index)].fetch_add(1);
}

} // namespace

TEST_CASE("parallelFor calls each index once", "[runtime][threads]") {
  for (unsigned threads : {1u, 2u, 4u}) {
    kiln::host::ThreadPool pool(threads);
    CHECK(pool.threads() == threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        Counts counts(n);
        kiln::host::ThreadPool::parallelFor(&pool, count, &counts, n);
        for (int64_t i = 0; i < n; ++i)
          CHECK(counts.calls[size_t(i)].load() == 1);
      }
    }
  }
}

TEST_CASE("a pool knows the CPUs it may use", "[runtime][threads]") {
  CHECK(kiln::host::ThreadPool::availableThreads() >= 1);
}
