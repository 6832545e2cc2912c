// What the runtime knows of a loaded model, shared by the API (runtime.cpp)
// and the devices that run it (the host there, CUDA in Cuda.cpp).

#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "kiln/runtime.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct kiln_status_s {
  kiln_status_code_t code;
  std::string message;
};

namespace kiln {

/// A status with a printf-style message; never NULL.
kiln_status_t makeStatus(kiln_status_code_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

struct TensorInfo {
  std::string name;
  kiln_dtype_t dtype;
  std::vector<int64_t> shape;
  size_t byteSize;
};

/// A GPU kernel's argument as its launch passes it (artifact.fbs).
struct LaunchArg {
  enum class Base : uint8_t { Scalar, Input, Output, Arena, Weights };
  Base base = Base::Scalar;
  uint32_t index = 0;       ///< the input's or output's
  uint64_t byteOffset = 0;  ///< of the first element in its memory
  int64_t offset = 0;       ///< the descriptor's, in elements
  std::vector<int64_t> sizes, strides;
  uint8_t width = 0;        ///< a scalar's bytes
  uint64_t bits = 0;
  /// When the kernel takes a TMA tensor map over the buffer instead of its
  /// descriptor: f32 elements, dims innermost first, strides in bytes for
  /// every dimension but the first, the box, the swizzle span in bytes.
  bool tensorMap = false;
  std::vector<uint64_t> mapDims, mapStrides;
  std::vector<uint32_t> mapBox;
  uint32_t swizzle = 0;
};

struct Launch {
  std::string kernel;
  uint32_t grid[3], block[3];
  uint32_t sharedBytes;
  std::vector<LaunchArg> args;
};

/// What one target's code runs.
struct Plan {
  uint64_t arenaBytes = 0;
  const uint8_t *weights = nullptr;
  uint64_t weightsSize = 0;
  std::vector<Launch> launches; ///< a GPU plan's kernels, in order
};

/// A code section of the artifact.
struct CodeObject {
  enum class Kind : uint8_t { Host, PTX, Cubin };
  Kind kind;
  std::string target; ///< x86-64-v3, sm_90, ...
  const uint8_t *data;
  size_t size;
  uint32_t plan;
};

/// Memory that holds an artifact: a read-only mapping of its file, or a
/// 4096-byte aligned copy of a caller's buffer.
struct Storage {
  uint8_t *data = nullptr;
  size_t size = 0;
  bool mapped = false;
  ~Storage();
};

namespace cuda {
struct ModelState;
void destroy(ModelState *state);
} // namespace cuda

} // namespace kiln

struct kiln_model_s {
  std::atomic<int> references{1};
  kiln::Storage storage;
  std::vector<kiln::TensorInfo> inputs, outputs;
  std::vector<kiln::Plan> plans;
  std::vector<kiln::CodeObject> code;
  /// Whether the code may be loaded (not KILN_MODEL_LOAD_NO_CODE).
  bool hasCode = false;

  // The host code: its plan, and the library once loaded.
  int hostPlan = -1;
  /// Why the host cannot run this model, when it cannot.
  std::string hostUnavailable;
  void *library = nullptr;
  /// The memfd holding the host code stays open while the library is
  /// loaded: its /proc/self/fd path names this library alone, so another
  /// model's dlopen cannot be handed this one.
  int codeFd = -1;
  void (*entry)(void **) = nullptr;

  /// Per CUDA device the model has run on: its loaded code and weights,
  /// made by the first session there and kept while the model lives.
  std::mutex cudaMutex;
  std::vector<kiln::cuda::ModelState *> cudaStates;

  ~kiln_model_s();
};

namespace kiln {
/// The targets `model` has code for, each once, in the artifact's order:
/// "x86-64-v3, sm_80, sm_90".
std::string codeTargets(const kiln_model_t &model);
} // namespace kiln

#endif // KILN_RUNTIME_MODEL_H
