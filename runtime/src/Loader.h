// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Loading an artifact into a model: from a file or from memory, verified
// before anything in it is used.

#ifndef KILN_RUNTIME_LOADER_H
#define KILN_RUNTIME_LOADER_H

#include "runtime/src/Model.h"

#include <array>

namespace kiln {

using TrustedKey = std::array<uint8_t, 32>;

struct LoadOptions {
  /// Whether to load the host code (not KILN_MODEL_LOAD_NO_CODE).
  bool loadCode = true;
  /// When not empty, only artifacts signed by one of these Ed25519 public
  /// keys load.
  std::vector<TrustedKey> trustedKeys;
};

/// Maps the artifact at `path` and reads it into a new model, one reference
/// held by *out_model. Errors as kiln_model_load_file's, the message led by
/// the path.
kiln_status_t loadFile(const char *path, const LoadOptions &options, kiln_model_t **out_model);

/// The same from a copy of `size` bytes at `data`.
kiln_status_t loadMemory(const void *data, size_t size, const LoadOptions &options,
                         kiln_model_t **out_model);

} // namespace kiln

#endif // KILN_RUNTIME_LOADER_H
