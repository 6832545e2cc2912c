// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/host/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <sched.h>

namespace kiln::host {

namespace {

/// How long an idle worker watches for the next job before it sleeps: a
/// model's kernels follow one another within microseconds, and waking a
/// sleeping thread costs tens of them.
constexpr std::chrono::microseconds kSpinTime(200);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

} // namespace

ThreadPool::ThreadPool(unsigned threads) {
  try {
    for (unsigned i = 1; i < threads; ++i)
      workers.emplace_back([this] { work(); });
  } catch (...) {
    shutdown();
    throw;
  }
}

ThreadPool::~ThreadPool() { shutdown(); }

void ThreadPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping.store(true, std::memory_order_release);
  }
  started.notify_all();
  for (std::thread &worker : workers)
    worker.join();
  workers.clear();
}

void ThreadPool::drain() {
  // Indices are claimed a chunk at a time: about 8 chunks per thread keep
  // the threads balanced without contending for `next` on every task.
  int64_t chunk = std::max<int64_t>(1, count / (int64_t(threads()) * 8));
  for (int64_t first; (first = next.fetch_add(chunk, std::memory_order_relaxed)) < count;)
    for (int64_t i = first, end = std::min(count, first + chunk); i < end; ++i)
      body(captures, i);
}

void ThreadPool::work() {
  uint64_t seen = 0;
  auto waiting = [&] {
    return generation.load(std::memory_order_acquire) == seen &&
           !stopping.load(std::memory_order_acquire);
  };
  for (;;) {
    auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    for (unsigned spins = 1; waiting(); ++spins) {
      relax();
      if (spins % 64 == 0 && std::chrono::steady_clock::now() > deadline) {
        std::unique_lock<std::mutex> lock(mutex);
        started.wait(lock, [&] { return !waiting(); });
        break;
      }
    }
    if (stopping.load(std::memory_order_acquire))
      return;
    seen = generation.load(std::memory_order_acquire);
    drain();
    busy.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::parallelFor(Body job, void *jobCaptures, int64_t jobCount) {
  if (workers.empty() || jobCount <= 1) {
    for (int64_t i = 0; i < jobCount; ++i)
      job(jobCaptures, i);
    return;
  }
  // Every worker finished the last job before it returned, so none reads
  // these while they change; the release below publishes them.
  body = job;
  captures = jobCaptures;
  count = jobCount;
  next.store(0, std::memory_order_relaxed);
  busy.store(unsigned(workers.size()), std::memory_order_relaxed);
  {
    // Under the mutex, so a worker between its check and its sleep cannot
    // miss the job.
    std::lock_guard<std::mutex> lock(mutex);
    generation.fetch_add(1, std::memory_order_release);
  }
  started.notify_all();
  drain();
  for (unsigned spins = 1; busy.load(std::memory_order_acquire) != 0; ++spins) {
    relax();
    if (spins % 1024 == 0)
      std::this_thread::yield();
  }
}

void ThreadPool::parallelFor(void *pool, Body body, void *captures, int64_t count) {
  static_cast<ThreadPool *>(pool)->parallelFor(body, captures, count);
}

unsigned ThreadPool::availableThreads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return unsigned(CPU_COUNT(&set));
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware ? hardware : 1;
}

} // namespace kiln::host
