// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A fork-join thread pool: the host code's parallel_for (runtime/format/format.h) runs on it.

#ifndef KILN_RUNTIME_HOST_THREADPOOL_H
#define KILN_RUNTIME_HOST_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::host {

class ThreadPool {
public:
  using Body = void (*)(void *captures, int64_t index);

  /// Work runs on the calling thread and `threads - 1` workers started here
  /// (std::system_error when one cannot start).
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned threads() const { return unsigned(workers.size()) + 1; }

  /// Calls body(captures, i) for every i in [0, count), each once, and
  /// returns when all calls have returned. Threads take indices in turn, so
  /// uneven tasks balance. One caller at a time. Idle workers watch for the
  /// next job for a moment before they sleep.
  void parallelFor(Body body, void *captures, int64_t count);

  /// parallelFor with the signature of kiln_host_context_t::parallel_for.
  static void parallelFor(void *pool, Body body, void *captures, int64_t count);

  /// The threads this process may run on (at least 1).
  static unsigned availableThreads();

private:
  void work();
  void shutdown();
  void drain();

  std::vector<std::thread> workers;
  // Sleeping workers wait on `started`; the mutex orders a new job against
  // a worker about to sleep.
  std::mutex mutex;
  std::condition_variable started;
  // The current job's number, the workers still on it, shutdown.
  std::atomic<uint64_t> generation{0};
  std::atomic<unsigned> busy{0};
  std::atomic<bool> stopping{false};
  // The current job, written before its generation is published.
  Body body = nullptr;
  void *captures = nullptr;
  int64_t count = 0;
  std::atomic<int64_t> next{0};
};

} // namespace kiln::host

#endif // KILN_RUNTIME_HOST_THREADPOOL_H
