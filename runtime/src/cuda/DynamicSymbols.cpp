#include "runtime/src/cuda/DynamicSymbols.h"

#include "runtime/src/gpu/Symbols.h"

#include <dlfcn.h>

const kiln::cuda::Loaded &kiln::cuda::loadDriver() {
  static const Loaded loaded = [] {
    Loaded result = {};
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *reason = dlerror();
      result.error = std::string("cannot open the CUDA driver (") +
                     (reason ? reason : "libcuda.so.1") + "); is an NVIDIA driver installed?";
      return result;
    }
    Driver &d = result.driver;
    gpu::Symbols resolve(library);
    resolve(d.init, "cuInit");
    resolve(d.getErrorName, "cuGetErrorName");
    resolve(d.getErrorString, "cuGetErrorString");
    resolve(d.deviceGetCount, "cuDeviceGetCount");
    resolve(d.deviceGet, "cuDeviceGet");
    resolve(d.deviceGetAttribute, "cuDeviceGetAttribute");
    resolve(d.deviceGetName, "cuDeviceGetName");
    resolve(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(d.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    resolve(d.ctxPushCurrent, "cuCtxPushCurrent_v2");
    resolve(d.ctxPopCurrent, "cuCtxPopCurrent_v2");
    resolve(d.moduleLoadDataEx, "cuModuleLoadDataEx");
    resolve(d.moduleUnload, "cuModuleUnload");
    resolve(d.moduleGetFunction, "cuModuleGetFunction");
    resolve(d.moduleGetGlobal, "cuModuleGetGlobal_v2");
    resolve(d.funcSetAttribute, "cuFuncSetAttribute");
    resolve(d.memAlloc, "cuMemAlloc_v2");
    resolve(d.memFree, "cuMemFree_v2");
    resolve(d.memAllocHost, "cuMemAllocHost_v2");
    resolve(d.memFreeHost, "cuMemFreeHost");
    resolve(d.memcpyHtoD, "cuMemcpyHtoD_v2");
    resolve(d.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    resolve(d.memcpyDtoH, "cuMemcpyDtoH_v2");
    resolve(d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    resolve(d.streamCreate, "cuStreamCreate");
    resolve(d.streamDestroy, "cuStreamDestroy_v2");
    resolve(d.streamSynchronize, "cuStreamSynchronize");
    resolve(d.launchKernel, "cuLaunchKernel");
    resolve(d.streamBeginCapture, "cuStreamBeginCapture_v2");
    resolve(d.streamEndCapture, "cuStreamEndCapture");
    resolve(d.graphInstantiate, "cuGraphInstantiateWithFlags");
    resolve(d.graphLaunch, "cuGraphLaunch");
    resolve(d.graphExecDestroy, "cuGraphExecDestroy");
    resolve(d.graphDestroy, "cuGraphDestroy");
    resolve(d.eventCreate, "cuEventCreate");
    resolve(d.eventDestroy, "cuEventDestroy_v2");
    resolve(d.eventRecord, "cuEventRecord");
    resolve(d.eventElapsedTime, "cuEventElapsedTime");
    d.tensorMapEncodeTiled = reinterpret_cast<decltype(d.tensorMapEncodeTiled)>(
        dlsym(library, "cuTensorMapEncodeTiled"));
    if (!resolve.missing.empty()) {
      result.error =
          std::string("the CUDA driver lacks ") + resolve.missing + "; it is too old for kiln";
      return result;
    }
    if (CUresult status = d.init(0); status != CUDA_SUCCESS) {
      const char *text = nullptr;
      d.getErrorString(status, &text);
      result.error =
          std::string("the CUDA driver cannot start: ") + (text ? text : "unknown error");
    }
    return result;
  }();
  return loaded;
}
