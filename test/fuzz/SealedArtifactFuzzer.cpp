// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Artifacts whose digest was recomputed (as anyone editing one can), so
// every mutation reaches the manifest's checks: whatever loads must
// describe itself within what it declares. Code is not loaded: running
// fuzzed machine code tests nothing of kiln's.

#include "kiln/runtime.h"
#include "runtime/format/format.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < KILN_HEADER_SIZE)
    return 0;
  std::vector<uint8_t> bytes(data, data + size);
  // Unsigned, with the digest of what is there.
  std::memset(bytes.data() + KILN_AUTH_OFFSET, 0, KILN_AUTH_BYTES);
  if (kiln_artifact_digest(bytes.data(), bytes.size(), bytes.data() + KILN_AUTH_OFFSET) != 0)
    abort();
  kiln_model_options_t options = {KILN_API_VERSION, KILN_MODEL_LOAD_NO_CODE, nullptr, 0};
  kiln_model_t *model = nullptr;
  kiln_status_t status = kiln_model_load_memory(bytes.data(), bytes.size(), &options, &model);
  if (status) {
    if (model || kiln_status_code(status) == KILN_STATUS_OK || !*kiln_status_message(status))
      abort();
    kiln_status_free(status);
    return 0;
  }
  // What loaded describes itself consistently: symbols with
  // 0 <= min <= opt <= max, and each tensor's byte size that of its
  // shape, a symbolic dimension (-1, with an expression) at its largest.
  for (size_t i = 0; i < kiln_model_symbol_count(model); ++i) {
    kiln_symbol_info_t symbol;
    if (kiln_model_symbol_info(model, i, &symbol) || !symbol.name || symbol.min < 0 ||
        symbol.min > symbol.opt || symbol.opt > symbol.max)
      abort();
  }
  for (int output = 0; output < 2; ++output) {
    size_t count = output ? kiln_model_output_count(model) : kiln_model_input_count(model);
    for (size_t i = 0; i < count; ++i) {
      kiln_tensor_info_t info;
      kiln_status_t described =
          output ? kiln_model_output_info(model, i, &info) : kiln_model_input_info(model, i, &info);
      if (described || !info.name || kiln_dtype_size(info.dtype) == 0)
        abort();
      size_t fixed = kiln_dtype_size(info.dtype);
      bool symbolic = false;
      for (size_t d = 0; d < info.rank; ++d) {
        const char *dim =
            output ? kiln_model_output_dim(model, i, d) : kiln_model_input_dim(model, i, d);
        if ((info.shape[d] == -1) != (dim != nullptr) || info.shape[d] < -1)
          abort();
        if (info.shape[d] == -1)
          symbolic = true;
        else
          fixed *= size_t(info.shape[d]);
      }
      if (symbolic ? fixed != 0 && info.byte_size % fixed != 0 : fixed != info.byte_size)
        abort();
    }
  }
  kiln_model_arena_bytes(model);
  kiln_session_t *session = nullptr;
  kiln_status_t refused = kiln_session_create(model, nullptr, &session);
  if (!refused || session)
    abort(); // a model loaded without its code cannot run
  kiln_status_free(refused);
  kiln_model_release(model);
  return 0;
}
