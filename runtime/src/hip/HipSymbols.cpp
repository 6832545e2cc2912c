#include "runtime/src/hip/HipSymbols.h"

#include "runtime/src/gpu/Symbols.h"

#include <dlfcn.h>

const kiln::hip::Loaded &kiln::hip::loadDriver() {
  static const Loaded loaded = [] {
    Loaded result = {};
    void *library = nullptr;
    for (const char *name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
        result.library = name;
        break;
      }
    if (!library) {
      result.error = "cannot open the HIP runtime (libamdhip64.so, .so.6 or .so.5); is ROCm "
                     "installed (Debian: libamdhip64-5)?";
      return result;
    }
    Driver &d = result.driver;
    gpu::Symbols resolve(library);
    resolve(d.init, "hipInit");
    resolve(d.getErrorName, "hipGetErrorName");
    resolve(d.getErrorString, "hipGetErrorString");
    resolve(d.getDeviceCount, "hipGetDeviceCount");
    resolve(d.getDevice, "hipGetDevice");
    resolve(d.setDevice, "hipSetDevice");
    resolve(d.getDeviceProperties, "hipGetDeviceProperties");
    resolve(d.moduleLoadData, "hipModuleLoadData");
    resolve(d.moduleUnload, "hipModuleUnload");
    resolve(d.moduleGetFunction, "hipModuleGetFunction");
    resolve(d.moduleGetGlobal, "hipModuleGetGlobal");
    resolve(d.malloc, "hipMalloc");
    resolve(d.free, "hipFree");
    resolve(d.hostMalloc, "hipHostMalloc");
    resolve(d.hostFree, "hipHostFree");
    resolve(d.memcpyHtoD, "hipMemcpyHtoD");
    resolve(d.memcpyDtoH, "hipMemcpyDtoH");
    resolve(d.memcpyHtoDAsync, "hipMemcpyHtoDAsync");
    resolve(d.memcpyDtoHAsync, "hipMemcpyDtoHAsync");
    resolve(d.streamCreateWithFlags, "hipStreamCreateWithFlags");
    resolve(d.streamDestroy, "hipStreamDestroy");
    resolve(d.streamSynchronize, "hipStreamSynchronize");
    resolve(d.eventCreate, "hipEventCreate");
    resolve(d.eventDestroy, "hipEventDestroy");
    resolve(d.eventRecord, "hipEventRecord");
    resolve(d.eventElapsedTime, "hipEventElapsedTime");
    resolve(d.moduleLaunchKernel, "hipModuleLaunchKernel");
    resolve(d.streamBeginCapture, "hipStreamBeginCapture");
    resolve(d.streamEndCapture, "hipStreamEndCapture");
    resolve(d.graphInstantiate, "hipGraphInstantiate");
    resolve(d.graphLaunch, "hipGraphLaunch");
    resolve(d.graphExecDestroy, "hipGraphExecDestroy");
    resolve(d.graphDestroy, "hipGraphDestroy");
    if (!resolve.missing.empty()) {
      result.error = result.library + " lacks " + resolve.missing + "; it is too old for kiln";
      return result;
    }
    result.initStatus = d.init(0);
    if (result.initStatus != hipSuccess && result.initStatus != hipErrorNoDevice &&
        result.initStatus != hipErrorInvalidDevice) {
      const char *name = d.getErrorName(result.initStatus);
      result.error = result.library + " cannot start: " + (name ? name : "unknown error");
    }
    return result;
  }();
  return loaded;
}
