// A fork-join thread pool: the host code's parallel_for (format.h) runs on it.

#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

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
  /// uneven tasks balance. One caller at a time.
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
  std::mutex mutex;
  std::condition_variable started, finished;
  // Guarded by mutex: the job's number, the workers still on it, shutdown.
  uint64_t generation = 0;
  unsigned busy = 0;
  bool stopping = false;
  // The current job, set under mutex before its generation is announced.
  Body body = nullptr;
  void *captures = nullptr;
  int64_t count = 0;
  std::atomic<int64_t> next{0};
};

} // namespace kiln

#endif // KILN_RUNTIME_THREADPOOL_H
