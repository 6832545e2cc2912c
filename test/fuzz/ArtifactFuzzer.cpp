// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Artifacts as they come: the header and the digest must stop anything
// malformed before the manifest is read.

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln_model_options_t options = {KILN_API_VERSION, KILN_MODEL_LOAD_NO_CODE, nullptr, 0};
  kiln_model_t *model = nullptr;
  kiln_status_free(kiln_model_load_memory(data, size, &options, &model));
  kiln_model_release(model);
  return 0;
}
