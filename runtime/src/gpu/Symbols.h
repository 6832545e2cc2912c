// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A driver's entry points, resolved with dlsym into the vendors' tables
// (cuda/DynamicSymbols.cpp, hip/HipSymbols.cpp).

#ifndef KILN_RUNTIME_GPU_SYMBOLS_H
#define KILN_RUNTIME_GPU_SYMBOLS_H

#include <dlfcn.h>
#include <string>

namespace kiln::gpu {

/// Resolves entry points of an opened library, remembering the first one
/// it lacks.
class Symbols {
public:
  explicit Symbols(void *library) : library(library) {}

  template <typename Function> void operator()(Function &function, const char *name) {
    function = reinterpret_cast<Function>(dlsym(library, name));
    if (!function && missing.empty())
      missing = name;
  }

  /// The first name not found; empty when every one was.
  std::string missing;

private:
  void *library;
};

} // namespace kiln::gpu

#endif // KILN_RUNTIME_GPU_SYMBOLS_H
