#include "ThreadPool.h"

#include <sched.h>

namespace kiln {

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
    stopping = true;
  }
  started.notify_all();
  for (std::thread &worker : workers)
    worker.join();
  workers.clear();
}

void ThreadPool::drain() {
  for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;)
    body(captures, i);
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      started.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
    }
    drain();
    std::lock_guard<std::mutex> lock(mutex);
    if (--busy == 0)
      finished.notify_one();
  }
}

void ThreadPool::parallelFor(Body job, void *jobCaptures, int64_t jobCount) {
  if (workers.empty() || jobCount <= 1) {
    for (int64_t i = 0; i < jobCount; ++i)
      job(jobCaptures, i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    body = job;
    captures = jobCaptures;
    count = jobCount;
    next.store(0, std::memory_order_relaxed);
    busy = unsigned(workers.size());
    ++generation;
  }
  started.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex);
  finished.wait(lock, [&] { return busy == 0; });
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

} // namespace kiln
