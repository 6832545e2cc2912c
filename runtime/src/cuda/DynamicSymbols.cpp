// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
#define KILN_CUDA_SYMBOL(member, symbol, result, parameters) resolve(d.member, #symbol);
#define KILN_CUDA_OPTIONAL_SYMBOL(member, symbol, result, parameters)                              \
  d.member = reinterpret_cast<decltype(d.member)>(dlsym(library, #symbol));
#include "runtime/src/cuda/DynamicSymbolTables.h"
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
