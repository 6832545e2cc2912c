// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the fake GPU drivers (FakeCuda.cpp, FakeHip.cpp) share: device
// memory that is host memory, checked copies, kernels that do not run but
// whose every pointer parameter must point into device memory (as it would
// have to on a GPU), captured graphs, events that count the kernels run,
// and the settings and counters the tests steer and read. Each fake is a
// shared library of its own and includes this once.

#ifndef KILN_TEST_UNIT_RUNTIME_FAKEGPU_H
#define KILN_TEST_UNIT_RUNTIME_FAKEGPU_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace fake {

struct Kernel {
  std::string name;
  /// Whether each parameter is a pointer; empty when the image does not
  /// say (a cubin), and the launch is not checked.
  std::vector<bool> pointers;
};

struct Recorded {
  const Kernel *kernel;
  std::vector<uint64_t> params;
  /// The launch's grid: x * y * z blocks.
  long blocks = 0;
};

struct Gpu {
  std::mutex mutex;
  std::map<std::string, long> settings;
  std::map<std::string, long> counters;
  std::map<uintptr_t, size_t> allocations;
  long allocated = 0;
  /// The error a failed kernel leaves behind, reported by every sync after.
  int sticky = 0;
  bool capturing = false;
  std::vector<Recorded> captured;
};

inline Gpu &gpu() {
  static Gpu instance;
  return instance;
}

/// Restores the settings to `defaults` (and what every fake has) and
/// clears the counters and any failure.
inline void reset(const std::map<std::string, long> &defaults) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.settings = defaults;
  g.settings["memory"] = 1L << 40;
  g.counters.clear();
  g.sticky = 0;
}

/// What the tests' `set` does: a setting, or with "reset" the defaults.
inline void set(const char *key, long value, const std::map<std::string, long> &defaults) {
  if (std::string(key) == "reset")
    return reset(defaults);
  std::lock_guard<std::mutex> lock(gpu().mutex);
  gpu().settings[key] = value;
}

/// What the tests' `get` does: a counter.
inline long get(const char *key) {
  std::lock_guard<std::mutex> lock(gpu().mutex);
  return gpu().counters[key];
}

inline bool inDeviceMemory(const Gpu &g, uint64_t address, size_t bytes) {
  auto it = g.allocations.upper_bound(address);
  if (it == g.allocations.begin())
    return false;
  --it;
  return address >= it->first && address + bytes <= it->first + it->second;
}

/// Device memory, 256-byte aligned and zeroed, as the drivers give it;
/// false when the fake's memory setting is exhausted.
inline bool allocate(uint64_t *address, size_t bytes) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  if (g.allocated + long(bytes) > g.settings["memory"])
    return false;
  size_t rounded = bytes ? (bytes + 255) / 256 * 256 : 256;
  void *memory = aligned_alloc(256, rounded);
  if (!memory)
    return false;
  memset(memory, 0, rounded);
  g.allocated += long(bytes);
  g.allocations[uintptr_t(memory)] = bytes;
  ++g.counters["allocations"];
  *address = uintptr_t(memory);
  return true;
}

/// Frees what `allocate` gave; false for any other address.
inline bool release(uint64_t address) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.allocations.find(address);
  if (it == g.allocations.end())
    return false;
  g.allocated -= long(it->second);
  g.allocations.erase(it);
  --g.counters["allocations"];
  free(reinterpret_cast<void *>(address));
  return true;
}

/// Marks a module's global as device memory, and forgets it.
inline void mapGlobal(const std::string &bytes) {
  std::lock_guard<std::mutex> lock(gpu().mutex);
  gpu().allocations[uintptr_t(bytes.data())] = bytes.size();
}
inline void unmapGlobal(const std::string &bytes) {
  std::lock_guard<std::mutex> lock(gpu().mutex);
  gpu().allocations.erase(uintptr_t(bytes.data()));
}

/// Copies into device memory (counted as an upload when `counted`); false
/// when the bytes are not all in one allocation.
inline bool copyToDevice(uint64_t to, const void *from, size_t bytes, bool counted) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!inDeviceMemory(g, to, bytes))
    return false;
  memcpy(reinterpret_cast<void *>(to), from, bytes);
  if (counted)
    ++g.counters["uploads"];
  return true;
}

inline bool copyToHost(void *to, uint64_t from, size_t bytes) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!inDeviceMemory(g, from, bytes))
    return false;
  memcpy(to, reinterpret_cast<void *>(from), bytes);
  return true;
}

/// The bytes of a code object's plan record global: its initial value lies
/// in the ELF file as it is, from the record's first line to its NUL. The
/// file's size comes from its header (section headers come last).
inline std::string elfRecord(const char *image) {
  uint64_t sectionsAt;
  uint16_t entrySize, entries;
  memcpy(&sectionsAt, image + 0x28, 8);
  memcpy(&entrySize, image + 0x3a, 2);
  memcpy(&entries, image + 0x3c, 2);
  size_t size = sectionsAt + size_t(entrySize) * entries;
  static const char first[] = "kiln plan record ";
  const void *at = memmem(image, size, first, sizeof(first) - 1);
  if (!at)
    return std::string();
  const char *start = static_cast<const char *>(at);
  const void *nul = memchr(start, 0, image + size - start);
  return nul ? std::string(start, static_cast<const char *>(nul) + 1) : std::string();
}

/// What the fake CUDA driver's tensor maps start with: "KILNTMAP".
constexpr uint64_t kTensorMapMagic = 0x50414d544e4c494bull;

/// Runs a launch as a GPU would find out what it passed: each pointer
/// parameter must point into device memory (else `badPointer` is the
/// error every later sync reports); counts the parameters that are
/// addresses of tensor maps in device memory.
inline void execute(Gpu &g, const Recorded &launch, int badPointer) {
  ++g.counters["kernels run"];
  g.counters["blocks"] += launch.blocks;
  for (size_t i = 0; i < launch.kernel->pointers.size(); ++i) {
    uint64_t value = launch.params[i];
    if (launch.kernel->pointers[i] && !inDeviceMemory(g, value, 1)) {
      g.sticky = badPointer;
      ++g.counters["bad pointers"];
    }
    if (!launch.kernel->pointers[i] && value % 64 == 0 && inDeviceMemory(g, value, 128) &&
        *reinterpret_cast<const uint64_t *>(value) == kTensorMapMagic)
      ++g.counters["tensor maps read"];
  }
  if (long failure = g.settings["fail kernels"])
    g.sticky = int(failure);
}

/// Queues a launch of `kernel` on `blocks` blocks with `params` (a pointer
/// to each of its parameters, 8 bytes each as kiln lays them out): run at
/// once, or recorded while a stream captures. The blocks run add up in the
/// "blocks" counter.
inline void launch(const Kernel *kernel, void **params, int badPointer, long blocks) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  Recorded launch{kernel, {}, blocks};
  for (size_t i = 0; i < kernel->pointers.size(); ++i)
    launch.params.push_back(*static_cast<uint64_t *>(params[i]));
  ++g.counters["launches"];
  if (g.capturing)
    g.captured.push_back(launch);
  else
    execute(g, launch, badPointer);
}

inline int synchronize() {
  std::lock_guard<std::mutex> lock(gpu().mutex);
  ++gpu().counters["syncs"];
  return gpu().sticky;
}

// Graphs: the launches captured, replayed by each graph launch.
inline void beginCapture() {
  std::lock_guard<std::mutex> lock(gpu().mutex);
  gpu().capturing = true;
  gpu().captured.clear();
}
inline void *endCapture() {
  std::lock_guard<std::mutex> lock(gpu().mutex);
  gpu().capturing = false;
  ++gpu().counters["graphs"];
  return new std::vector<Recorded>(gpu().captured);
}
inline void *instantiate(void *graph) {
  return new std::vector<Recorded>(*static_cast<std::vector<Recorded> *>(graph));
}
inline void launchGraph(void *exec, int badPointer) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  ++g.counters["graph launches"];
  for (const Recorded &launch : *static_cast<std::vector<Recorded> *>(exec))
    execute(g, launch, badPointer);
}
inline void destroyGraph(void *graph, bool counted) {
  delete static_cast<std::vector<Recorded> *>(graph);
  if (counted) {
    std::lock_guard<std::mutex> lock(gpu().mutex);
    ++gpu().counters["graphs destroyed"];
  }
}

// Events read the number of kernels run so far, in milliseconds: a run's
// time is then its kernel count.
inline void *createEvent() { return new float(0); }
inline void destroyEvent(void *event) { delete static_cast<float *>(event); }
inline void recordEvent(void *event) {
  std::lock_guard<std::mutex> lock(gpu().mutex);
  *static_cast<float *>(event) = float(gpu().counters["kernels run"]);
}
inline float elapsed(void *start, void *end) {
  return *static_cast<float *>(end) - *static_cast<float *>(start);
}

} // namespace fake

#endif // KILN_TEST_UNIT_RUNTIME_FAKEGPU_H
