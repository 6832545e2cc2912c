// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs a compiled model from C++, with the C API behind small RAII owners.
//
//   find_package(kiln REQUIRED)
//   target_link_libraries(embed_cpp PRIVATE kiln::runtime)
//
//   ./embed_cpp model.kiln

#include <kiln/runtime.h>

#include <cstdio>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(kiln_status_t status) {
  if (!status)
    return;
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  throw std::runtime_error(message);
}

struct ModelDeleter {
  void operator()(kiln_model_t *model) const { kiln_model_release(model); }
};
struct SessionDeleter {
  void operator()(kiln_session_t *session) const { kiln_session_destroy(session); }
};

} // namespace

int main(int argc, char **argv) try {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed_cpp MODEL.kiln\n");
    return 2;
  }
  kiln_model_t *raw = nullptr;
  check(kiln_model_load_file(argv[1], nullptr, &raw));
  std::unique_ptr<kiln_model_t, ModelDeleter> model(raw);

  std::vector<std::vector<float>> buffers;
  std::vector<kiln_tensor_t> inputs;
  for (size_t i = 0; i < kiln_model_input_count(model.get()); ++i) {
    kiln_tensor_info_t info;
    check(kiln_model_input_info(model.get(), i, &info));
    buffers.emplace_back(info.byte_size / sizeof(float), 1.0f);
    inputs.push_back(
        {info.name, info.dtype, info.rank, info.shape, buffers.back().data(), info.byte_size});
  }
  std::vector<kiln_tensor_t> outputs(kiln_model_output_count(model.get()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    kiln_tensor_info_t info;
    check(kiln_model_output_info(model.get(), i, &info));
    outputs[i].name = info.name;
  }

  kiln_session_t *rawSession = nullptr;
  check(kiln_session_create(model.get(), nullptr, &rawSession));
  std::unique_ptr<kiln_session_t, SessionDeleter> session(rawSession);
  check(kiln_session_run(session.get(), inputs.data(), inputs.size(), outputs.data(),
                         outputs.size()));
  for (const kiln_tensor_t &output : outputs) {
    const float *data = static_cast<const float *>(output.data);
    double sum = std::accumulate(data, data + output.byte_size / sizeof(float), 0.0);
    std::printf("output %s: %zu bytes, sum %.4f\n", output.name, output.byte_size, sum);
  }
  return 0;
} catch (const std::exception &error) {
  std::fprintf(stderr, "embed_cpp: %s\n", error.what());
  return 1;
}
