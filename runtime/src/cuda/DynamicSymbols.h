// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA driver API as kiln uses it: the few types, constants and entry
// points it calls, declared here so the runtime builds without CUDA's
// headers, and the table of entry points resolved with dlopen at run time,
// so one binary starts everywhere and says clearly when there is no driver.

#ifndef KILN_RUNTIME_CUDA_DYNAMICSYMBOLS_H
#define KILN_RUNTIME_CUDA_DYNAMICSYMBOLS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUevent = struct CUevent_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;
constexpr int kMaxDynamicSharedBytes = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferBytes = 6;
constexpr unsigned kStreamNonBlocking = 1;
constexpr int kCaptureThreadLocal = 1;

/// CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};
constexpr int kTensorMapFloat32 = 7;        // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
constexpr int kTensorMapL2Promotion256 = 3; // CU_TENSOR_MAP_L2_PROMOTION_L2_256B

/// The driver entry points kiln calls (DynamicSymbolTables.h), by their
/// versioned symbol names.
struct Driver {
#define KILN_CUDA_SYMBOL(member, symbol, result, parameters) result(*member) parameters;
#include "runtime/src/cuda/DynamicSymbolTables.h"
};

/// The driver, opened and initialized once per process; or why it cannot be.
struct Loaded {
  Driver driver;
  std::string error;
};

/// Opens libcuda.so.1 and initializes it the first time it is called;
/// thread-safe.
const Loaded &loadDriver();

} // namespace kiln::cuda

#endif // KILN_RUNTIME_CUDA_DYNAMICSYMBOLS_H
