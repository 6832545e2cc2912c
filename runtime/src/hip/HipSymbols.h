// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The HIP runtime API as kiln uses it: the few types, constants and entry
// points it calls, declared here so the runtime builds without ROCm's
// headers, and the table of entry points resolved with dlopen at run time
// (libamdhip64.so, then .so.6 and .so.5), so one binary starts everywhere
// and says clearly when there is no HIP runtime or no AMD GPU.

#ifndef KILN_RUNTIME_HIP_HIPSYMBOLS_H
#define KILN_RUNTIME_HIP_HIPSYMBOLS_H

#include <cstddef>
#include <string>

namespace kiln::hip {

using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;
using hipGraph_t = struct ihipGraph *;
using hipGraphExec_t = struct hipGraphExec *;
using hipGraphNode_t = struct hipGraphNode *;

constexpr hipError_t hipSuccess = 0, hipErrorOutOfMemory = 2, hipErrorNoDevice = 100,
                     hipErrorInvalidDevice = 101;
constexpr unsigned hipStreamNonBlocking = 1;
constexpr int hipStreamCaptureModeThreadLocal = 1;

/// hipGetDeviceProperties' structure as every HIP runtime since ROCm 5
/// fills it under that symbol (ROCm 6 keeps it as hipDeviceProp_tR0000):
/// kiln reads the name and the architecture's name alone, at their offsets;
/// the rest is room for what it does not read.
struct DeviceProperties {
  char name[256];
  char unread[140];
  char gcnArchName[256]; ///< "gfx942:sramecc+:xnack-"
  char rest[4096];
};
static_assert(offsetof(DeviceProperties, gcnArchName) == 396);

/// The HIP runtime's entry points kiln calls (HipSymbolTables.h).
struct Driver {
#define KILN_HIP_SYMBOL(member, symbol, result, parameters) result(*member) parameters;
#include "runtime/src/hip/HipSymbolTables.h"
};

/// The HIP runtime, opened and initialized once per process; or why it
/// cannot be.
struct Loaded {
  Driver driver;
  std::string library; ///< the file dlopen found: "libamdhip64.so.5"
  /// hipInit's status: hipErrorNoDevice or hipErrorInvalidDevice on a
  /// machine without an AMD GPU, whose sessions say so.
  hipError_t initStatus = hipSuccess;
  std::string error;
};

/// Opens the HIP runtime and initializes it the first time it is called;
/// thread-safe.
const Loaded &loadDriver();

} // namespace kiln::hip

#endif // KILN_RUNTIME_HIP_HIPSYMBOLS_H
