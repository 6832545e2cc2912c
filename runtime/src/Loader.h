// Loading an artifact into a model: from a file or from memory, verified
// before anything in it is used.

#ifndef KILN_RUNTIME_LOADER_H
#define KILN_RUNTIME_LOADER_H

#include "runtime/src/Model.h"

namespace kiln {

/// Maps the artifact at `path` and reads it into a new model, one reference
/// held by *out_model; loads its host code unless `loadCode` is false.
/// Errors as kiln_model_load_file's, the message led by the path.
kiln_status_t loadFile(const char *path, bool loadCode, kiln_model_t **out_model);

/// The same from a copy of `size` bytes at `data`.
kiln_status_t loadMemory(const void *data, size_t size, bool loadCode, kiln_model_t **out_model);

} // namespace kiln

#endif // KILN_RUNTIME_LOADER_H
