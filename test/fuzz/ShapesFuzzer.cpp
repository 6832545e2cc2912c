// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs of a model with symbolic dimensions ($KILN_TEST_SYMBOLIC_ARTIFACT,
// test/unit/runtime/inputs/symbolic.onnxtxt) on shapes and sizes as they
// come: each input's rank, dimensions and byte size, and each output given
// a buffer of its own shape or none. Every buffer is exactly as large as it
// says, so that ASan sees any read or write past one; a run either refuses
// its tensors or computes within them.

#include "kiln/runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

/// Reads the fuzzer's bytes in order; zeros once they run out.
struct Bytes {
  const uint8_t *data;
  size_t size;
  uint8_t next() {
    if (size == 0)
      return 0;
    --size;
    return *data++;
  }
  /// Mostly small sizes (the ranges are 1 to 8), now and then any.
  int64_t dim() {
    uint8_t kind = next();
    if (kind < 240)
      return int64_t(kind % 10);
    int64_t value = 0;
    for (int i = 0; i < 8; ++i)
      value = int64_t(uint64_t(value) << 8 | next());
    return value;
  }
};

struct Loaded {
  kiln_model_t *model = nullptr;
  kiln_session_t *session = nullptr;
  Loaded() {
    const char *path = std::getenv("KILN_TEST_SYMBOLIC_ARTIFACT");
    if (!path) {
      fprintf(stderr, "fuzz-shapes: set KILN_TEST_SYMBOLIC_ARTIFACT to a symbolic artifact\n");
      abort();
    }
    kiln_status_t status = kiln_model_load_file(path, nullptr, &model);
    if (!status)
      status = kiln_session_create(model, nullptr, &session);
    if (status) {
      fprintf(stderr, "fuzz-shapes: %s\n", kiln_status_message(status));
      abort();
    }
  }
};

struct Tensor {
  std::vector<int64_t> shape;
  std::unique_ptr<uint8_t[]> data;
  size_t bytes = 0;
};

/// A tensor of `dtype` with the next rank and dimensions, and as many
/// bytes as they make, give or take one element's worth.
void fill(Bytes &in, Tensor &tensor, kiln_dtype_t dtype, kiln_tensor_t &out, const char *name) {
  size_t rank = in.next() % 4;
  size_t elements = 1;
  for (size_t d = 0; d < rank; ++d) {
    tensor.shape.push_back(in.dim());
    if (tensor.shape.back() < 0 || tensor.shape.back() > 64)
      elements = 0;
    else
      elements *= size_t(tensor.shape.back());
  }
  tensor.bytes = elements * kiln_dtype_size(dtype);
  uint8_t skew = in.next();
  if (skew == 1)
    tensor.bytes += kiln_dtype_size(dtype);
  else if (skew == 2 && tensor.bytes)
    tensor.bytes -= kiln_dtype_size(dtype);
  tensor.data.reset(new uint8_t[tensor.bytes ? tensor.bytes : 1]());
  out = {name, dtype, rank, tensor.shape.data(), tensor.data.get(), tensor.bytes};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Loaded loaded;
  Bytes in{data, size};
  size_t inputs = kiln_model_input_count(loaded.model),
         outputs = kiln_model_output_count(loaded.model);
  std::vector<Tensor> storage(inputs + outputs);
  std::vector<kiln_tensor_t> given(inputs), wanted;
  for (size_t i = 0; i < inputs; ++i) {
    kiln_tensor_info_t info;
    kiln_status_free(kiln_model_input_info(loaded.model, i, &info));
    fill(in, storage[i], info.dtype, given[i], info.name);
  }
  for (size_t i = 0; i < outputs; ++i) {
    kiln_tensor_info_t info;
    kiln_status_free(kiln_model_output_info(loaded.model, i, &info));
    uint8_t how = in.next() % 3;
    if (how == 0)
      continue; // not asked for
    kiln_tensor_t &tensor = wanted.emplace_back();
    if (how == 1)
      tensor = {info.name}; // into the session's buffer
    else
      fill(in, storage[inputs + i], info.dtype, tensor, info.name);
  }
  kiln_status_t status =
      kiln_session_run(loaded.session, given.data(), given.size(), wanted.data(), wanted.size());
  if (!status)
    for (const kiln_tensor_t &output : wanted) {
      // A session's output is as large as it says.
      volatile uint8_t sink = 0;
      for (size_t b = 0; b < output.byte_size; ++b)
        sink = sink ^ static_cast<const uint8_t *>(output.data)[b];
    }
  kiln_status_free(status);
  return 0;
}
