// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The HIP runtime's entry points kiln calls, declared once (IREE's
// dynamic_symbol_tables.h shape): the runtime's Driver table and its dlsym
// calls (HipSymbols.*), and the fake runtime the tests load
// (test/unit/runtime/FakeHip.cpp), which must define each with exactly
// this signature, all expand it.
//
//   KILN_HIP_SYMBOL(member, symbol, result, (parameters))
//
// Types are HipSymbols.h's. No include guard: each expansion defines the
// macro and includes this file.

// clang-format off
KILN_HIP_SYMBOL(init, hipInit, hipError_t, (unsigned))
KILN_HIP_SYMBOL(getErrorName, hipGetErrorName, const char *, (hipError_t))
KILN_HIP_SYMBOL(getErrorString, hipGetErrorString, const char *, (hipError_t))
KILN_HIP_SYMBOL(getDeviceCount, hipGetDeviceCount, hipError_t, (int *))
KILN_HIP_SYMBOL(getDevice, hipGetDevice, hipError_t, (int *))
KILN_HIP_SYMBOL(setDevice, hipSetDevice, hipError_t, (int))
KILN_HIP_SYMBOL(getDeviceProperties, hipGetDeviceProperties, hipError_t, (DeviceProperties *, int))
KILN_HIP_SYMBOL(moduleLoadData, hipModuleLoadData, hipError_t, (hipModule_t *, const void *))
KILN_HIP_SYMBOL(moduleUnload, hipModuleUnload, hipError_t, (hipModule_t))
KILN_HIP_SYMBOL(moduleGetFunction, hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))
KILN_HIP_SYMBOL(moduleGetGlobal, hipModuleGetGlobal, hipError_t, (void **, size_t *, hipModule_t, const char *))
KILN_HIP_SYMBOL(malloc, hipMalloc, hipError_t, (void **, size_t))
KILN_HIP_SYMBOL(free, hipFree, hipError_t, (void *))
KILN_HIP_SYMBOL(hostMalloc, hipHostMalloc, hipError_t, (void **, size_t, unsigned))
KILN_HIP_SYMBOL(hostFree, hipHostFree, hipError_t, (void *))
KILN_HIP_SYMBOL(memcpyHtoD, hipMemcpyHtoD, hipError_t, (void *, const void *, size_t))
KILN_HIP_SYMBOL(memcpyDtoH, hipMemcpyDtoH, hipError_t, (void *, void *, size_t))
KILN_HIP_SYMBOL(memcpyHtoDAsync, hipMemcpyHtoDAsync, hipError_t, (void *, const void *, size_t, hipStream_t))
KILN_HIP_SYMBOL(memcpyDtoHAsync, hipMemcpyDtoHAsync, hipError_t, (void *, void *, size_t, hipStream_t))
KILN_HIP_SYMBOL(streamCreateWithFlags, hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned))
KILN_HIP_SYMBOL(streamDestroy, hipStreamDestroy, hipError_t, (hipStream_t))
KILN_HIP_SYMBOL(streamSynchronize, hipStreamSynchronize, hipError_t, (hipStream_t))
KILN_HIP_SYMBOL(eventCreate, hipEventCreate, hipError_t, (hipEvent_t *))
KILN_HIP_SYMBOL(eventDestroy, hipEventDestroy, hipError_t, (hipEvent_t))
KILN_HIP_SYMBOL(eventRecord, hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))
KILN_HIP_SYMBOL(eventElapsedTime, hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t))
KILN_HIP_SYMBOL(moduleLaunchKernel, hipModuleLaunchKernel, hipError_t, (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void **, void **))
KILN_HIP_SYMBOL(streamBeginCapture, hipStreamBeginCapture, hipError_t, (hipStream_t, int))
KILN_HIP_SYMBOL(streamEndCapture, hipStreamEndCapture, hipError_t, (hipStream_t, hipGraph_t *))
KILN_HIP_SYMBOL(graphInstantiate, hipGraphInstantiate, hipError_t, (hipGraphExec_t *, hipGraph_t, hipGraphNode_t *, char *, size_t))
KILN_HIP_SYMBOL(graphLaunch, hipGraphLaunch, hipError_t, (hipGraphExec_t, hipStream_t))
KILN_HIP_SYMBOL(graphExecDestroy, hipGraphExecDestroy, hipError_t, (hipGraphExec_t))
KILN_HIP_SYMBOL(graphDestroy, hipGraphDestroy, hipError_t, (hipGraph_t))

#undef KILN_HIP_SYMBOL
// clang-format on
