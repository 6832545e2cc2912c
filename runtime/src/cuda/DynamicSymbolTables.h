// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA driver's entry points kiln calls, declared once (IREE's
// dynamic_symbol_tables.h shape): the runtime's Driver table and its dlsym
// calls (DynamicSymbols.*), and the fake driver the tests load
// (test/unit/runtime/FakeCuda.cpp), which must define each with exactly
// this signature, all expand it.
//
//   KILN_CUDA_SYMBOL(member, symbol, result, (parameters))
//   KILN_CUDA_OPTIONAL_SYMBOL(...): the same, for an entry point older
//       drivers lack (CUDA 12's tensor maps, which only TMA plans need)
//
// Types are DynamicSymbols.h's. No include guard: each expansion defines
// the macros and includes this file.

// clang-format off
#ifndef KILN_CUDA_OPTIONAL_SYMBOL
#define KILN_CUDA_OPTIONAL_SYMBOL KILN_CUDA_SYMBOL
#endif

KILN_CUDA_SYMBOL(init, cuInit, CUresult, (unsigned))
KILN_CUDA_SYMBOL(getErrorName, cuGetErrorName, CUresult, (CUresult, const char **))
KILN_CUDA_SYMBOL(getErrorString, cuGetErrorString, CUresult, (CUresult, const char **))
KILN_CUDA_SYMBOL(deviceGetCount, cuDeviceGetCount, CUresult, (int *))
KILN_CUDA_SYMBOL(deviceGet, cuDeviceGet, CUresult, (CUdevice *, int))
KILN_CUDA_SYMBOL(deviceGetAttribute, cuDeviceGetAttribute, CUresult, (int *, int, CUdevice))
KILN_CUDA_SYMBOL(deviceGetName, cuDeviceGetName, CUresult, (char *, int, CUdevice))
KILN_CUDA_SYMBOL(primaryCtxRetain, cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))
KILN_CUDA_SYMBOL(primaryCtxRelease, cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice))
KILN_CUDA_SYMBOL(ctxPushCurrent, cuCtxPushCurrent_v2, CUresult, (CUcontext))
KILN_CUDA_SYMBOL(ctxPopCurrent, cuCtxPopCurrent_v2, CUresult, (CUcontext *))
KILN_CUDA_SYMBOL(moduleLoadDataEx, cuModuleLoadDataEx, CUresult, (CUmodule *, const void *, unsigned, int *, void **))
KILN_CUDA_SYMBOL(moduleUnload, cuModuleUnload, CUresult, (CUmodule))
KILN_CUDA_SYMBOL(moduleGetFunction, cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))
KILN_CUDA_SYMBOL(moduleGetGlobal, cuModuleGetGlobal_v2, CUresult, (CUdeviceptr *, size_t *, CUmodule, const char *))
KILN_CUDA_SYMBOL(funcSetAttribute, cuFuncSetAttribute, CUresult, (CUfunction, int, int))
KILN_CUDA_SYMBOL(memAlloc, cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t))
KILN_CUDA_SYMBOL(memFree, cuMemFree_v2, CUresult, (CUdeviceptr))
KILN_CUDA_SYMBOL(memAllocHost, cuMemAllocHost_v2, CUresult, (void **, size_t))
KILN_CUDA_SYMBOL(memFreeHost, cuMemFreeHost, CUresult, (void *))
KILN_CUDA_SYMBOL(memcpyHtoD, cuMemcpyHtoD_v2, CUresult, (CUdeviceptr, const void *, size_t))
KILN_CUDA_SYMBOL(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2, CUresult, (CUdeviceptr, const void *, size_t, CUstream))
KILN_CUDA_SYMBOL(memcpyDtoH, cuMemcpyDtoH_v2, CUresult, (void *, CUdeviceptr, size_t))
KILN_CUDA_SYMBOL(memcpyDtoHAsync, cuMemcpyDtoHAsync_v2, CUresult, (void *, CUdeviceptr, size_t, CUstream))
KILN_CUDA_SYMBOL(streamCreate, cuStreamCreate, CUresult, (CUstream *, unsigned))
KILN_CUDA_SYMBOL(streamDestroy, cuStreamDestroy_v2, CUresult, (CUstream))
KILN_CUDA_SYMBOL(streamSynchronize, cuStreamSynchronize, CUresult, (CUstream))
KILN_CUDA_SYMBOL(launchKernel, cuLaunchKernel, CUresult, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **))
KILN_CUDA_SYMBOL(streamBeginCapture, cuStreamBeginCapture_v2, CUresult, (CUstream, int))
KILN_CUDA_SYMBOL(streamEndCapture, cuStreamEndCapture, CUresult, (CUstream, CUgraph *))
KILN_CUDA_SYMBOL(graphInstantiate, cuGraphInstantiateWithFlags, CUresult, (CUgraphExec *, CUgraph, unsigned long long))
KILN_CUDA_SYMBOL(graphLaunch, cuGraphLaunch, CUresult, (CUgraphExec, CUstream))
KILN_CUDA_SYMBOL(graphExecDestroy, cuGraphExecDestroy, CUresult, (CUgraphExec))
KILN_CUDA_SYMBOL(graphDestroy, cuGraphDestroy, CUresult, (CUgraph))
KILN_CUDA_SYMBOL(eventCreate, cuEventCreate, CUresult, (CUevent *, unsigned))
KILN_CUDA_SYMBOL(eventDestroy, cuEventDestroy_v2, CUresult, (CUevent))
KILN_CUDA_SYMBOL(eventRecord, cuEventRecord, CUresult, (CUevent, CUstream))
KILN_CUDA_SYMBOL(eventElapsedTime, cuEventElapsedTime, CUresult, (float *, CUevent, CUevent))
KILN_CUDA_OPTIONAL_SYMBOL(tensorMapEncodeTiled, cuTensorMapEncodeTiled, CUresult, (TensorMap *, int, uint32_t, void *, const uint64_t *, const uint64_t *, const uint32_t *, const uint32_t *, int, int, int, int))

#undef KILN_CUDA_SYMBOL
#undef KILN_CUDA_OPTIONAL_SYMBOL
// clang-format on
