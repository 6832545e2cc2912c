// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
#define KILN_HIP_SYMBOL(member, symbol, result, parameters) resolve(d.member, #symbol);
#include "runtime/src/hip/HipSymbolTables.h"
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
