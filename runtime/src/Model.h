// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the runtime knows of a loaded model: what the loader (Loader.cpp)
// reads from the artifact, and what each device keeps of it.

#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "kiln/runtime.h"
#include "runtime/format/artifact_generated.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {

/// A model input or output. A symbolic one has -1 in `shape` at each
/// symbolic dimension, every dimension's program (DimProgram.h; a static
/// one's is its size) and the text of each symbolic one; its byteSize is
/// its size at the symbols' largest values.
struct TensorInfo {
  std::string name;
  kiln_dtype_t dtype;
  std::vector<int64_t> shape;
  size_t byteSize;
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> dimTexts;

  bool symbolic() const { return !dims.empty(); }
};

/// A size the model takes at run time, and the values it may take.
struct SymbolInfo {
  std::string name;
  int64_t min, max, opt;
};

/// A GPU kernel's argument as its launch passes it (artifact.fbs).
struct LaunchArg {
  enum class Base : uint8_t { Scalar, Input, Output, Arena, Weights };
  Base base = Base::Scalar;
  uint32_t index = 0;      ///< the input's or output's
  uint64_t byteOffset = 0; ///< of the first element in its memory
  int64_t offset = 0;      ///< the descriptor's, in elements
  std::vector<int64_t> sizes, strides;
  uint8_t width = 0; ///< a scalar's bytes
  uint64_t bits = 0;
  /// When the kernel takes a TMA tensor map over the buffer instead of its
  /// descriptor: f32 elements, dims innermost first, strides in bytes for
  /// every dimension but the first, the box, the swizzle span in bytes.
  bool tensorMap = false;
  std::vector<uint64_t> mapDims, mapStrides;
  std::vector<uint32_t> mapBox;
  uint32_t swizzle = 0;
  /// In a symbolic plan, where a run gives a field: every field's program
  /// (a buffer's byte offset, offset, sizes and strides; a scalar's value),
  /// evaluated at each run's symbols; else empty.
  std::vector<std::vector<int64_t>> dims;
};

struct Launch {
  std::string kernel;
  uint32_t grid[3], block[3];
  uint32_t sharedBytes;
  std::vector<LaunchArg> args;
  /// Where a run gives the grid: x, y and z as programs; else empty.
  std::vector<std::vector<int64_t>> gridDims;

  /// Whether a run gives any of its sizes.
  bool symbolic() const {
    return !gridDims.empty() || std::any_of(args.begin(), args.end(),
                                            [](const LaunchArg &a) { return !a.dims.empty(); });
  }
};

/// What one target's code runs.
struct Plan {
  uint64_t arenaBytes = 0;
  const uint8_t *weights = nullptr;
  uint64_t weightsSize = 0;
  std::vector<Launch> launches; ///< a GPU plan's kernels, in order
  size_t kernels = 0;           ///< the kernels the manifest lists
};

/// A code section of the artifact.
struct CodeSection {
  artifact::CodeKind kind;
  std::string target; ///< x86-64-v3, sm_90, gfx942, ...
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

/// What a device keeps of a model for all its sessions there (its loaded
/// code, its copy of the weights), freed with the model.
class DeviceModel {
public:
  virtual ~DeviceModel() = default;
};

} // namespace kiln

struct kiln_model_s {
  std::atomic<int> references{1};
  kiln::Storage storage;
  std::vector<kiln::TensorInfo> inputs, outputs;
  /// The symbols, in the order dimension programs number them; a run
  /// passes the host code their values in this order.
  std::vector<kiln::SymbolInfo> symbols;
  std::vector<kiln::Plan> plans;
  std::vector<kiln::CodeSection> code;
  /// The targets `code` is for, each once, in the artifact's order.
  std::vector<std::string> targets;
  /// Whether the code may be loaded (not KILN_MODEL_LOAD_NO_CODE).
  bool hasCode = false;

  /// The plan the host code runs, once it is loaded; why the host cannot
  /// run this model, when it cannot.
  int hostPlan = -1;
  std::string hostTarget; ///< the x86-64 level of the host code loaded
  std::string hostUnavailable;

  /// What each device keeps of the model, by device name ("host",
  /// "cuda:0"): the host's code when the model loads, a GPU's code and
  /// weights when the first session there opens. Freed before `storage`.
  std::mutex devicesMutex;
  std::vector<std::pair<std::string, std::unique_ptr<kiln::DeviceModel>>> devices;
};

namespace kiln {
/// The targets `model` has code for, each once, in the artifact's order:
/// "x86-64-v3, sm_80, sm_90".
std::string codeTargets(const kiln_model_t &model);

/// The record (runtime/format/PlanRecord.h) of the plan `code` runs, as the
/// manifest describes it: what the code itself must record.
std::string manifestRecord(const kiln_model_t &model, const CodeSection &code);

/// Makes a device's state of a model; its error, if it cannot.
using MakeDeviceModel = std::function<kiln_status_t(std::unique_ptr<DeviceModel> &out)>;

/// The state `device` keeps of `model`: the one made before, else the one
/// `make` makes now (NULL when `make` is empty). Thread-safe; one state is
/// made at a time, so two sessions opening at once on one device share it.
kiln_status_t deviceModel(kiln_model_t &model, const std::string &device,
                          const MakeDeviceModel &make, DeviceModel **out);
} // namespace kiln

#endif // KILN_RUNTIME_MODEL_H
