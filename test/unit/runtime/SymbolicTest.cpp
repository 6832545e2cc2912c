// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs of a model with symbolic dimensions (inputs/symbolic.onnxtxt:
// x[batch, 4] and z[batch, seq] give y = relu(x)[batch, 4], twice =
// concat(x, y)[2 * batch, 4] and top = max(z, axis 1)[batch]; batch 1 to
// 4, seq 1 to 8), which CTest compiles first and names in
// $KILN_TEST_SYMBOLIC_ARTIFACT: the symbols described, each run's sizes
// checked, outputs of the run's shape.

#include "kiln/runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

kiln_status_code_t codeOf(kiln_status_t status, std::string *message = nullptr) {
  kiln_status_code_t code = kiln_status_code(status);
  if (message)
    *message = kiln_status_message(status);
  kiln_status_free(status);
  return code;
}

struct Symbolic {
  kiln_model_t *model = nullptr;
  kiln_session_t *session = nullptr;
  Symbolic() {
    const char *path = std::getenv("KILN_TEST_SYMBOLIC_ARTIFACT");
    REQUIRE(path);
    REQUIRE(codeOf(kiln_model_load_file(path, nullptr, &model)) == KILN_STATUS_OK);
    REQUIRE(codeOf(kiln_session_create(model, nullptr, &session)) == KILN_STATUS_OK);
  }
  ~Symbolic() {
    kiln_session_destroy(session);
    kiln_model_release(model);
  }
};

/// Inputs for a batch of `batch` and a sequence of `seq`: x counts up from
/// -3, z's row r holds r, r + 1, ... r + seq - 1.
struct Inputs {
  std::vector<float> x, z;
  int64_t xShape[2], zShape[2];
  std::vector<kiln_tensor_t> tensors;
  Inputs(int64_t batch, int64_t seq) : xShape{batch, 4}, zShape{batch, seq} {
    for (int64_t i = 0; i < batch * 4; ++i)
      x.push_back(float(i - 3));
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t c = 0; c < seq; ++c)
        z.push_back(float(r + c));
    tensors = {{"x", KILN_DTYPE_F32, 2, xShape, x.data(), x.size() * 4},
               {"z", KILN_DTYPE_F32, 2, zShape, z.data(), z.size() * 4}};
  }
};

} // namespace

TEST_CASE("a symbolic model describes its symbols and dimensions", "[runtime][symbolic]") {
  Symbolic loaded;
  kiln_model_t *model = loaded.model;
  REQUIRE(kiln_model_symbol_count(model) == 2);
  kiln_symbol_info_t symbol;
  REQUIRE(codeOf(kiln_model_symbol_info(model, 0, &symbol)) == KILN_STATUS_OK);
  CHECK(std::string(symbol.name) == "batch");
  CHECK(symbol.min == 1);
  CHECK(symbol.max == 4);
  CHECK(symbol.opt == 1);
  REQUIRE(codeOf(kiln_model_symbol_info(model, 1, &symbol)) == KILN_STATUS_OK);
  CHECK(std::string(symbol.name) == "seq");
  CHECK(symbol.max == 8);
  std::string message;
  CHECK(codeOf(kiln_model_symbol_info(model, 2, &symbol), &message) ==
        KILN_STATUS_INVALID_ARGUMENT);
  CHECK(message == "symbol 2 does not exist: the model has 2");
  CHECK(codeOf(kiln_model_symbol_info(model, 0, nullptr)) == KILN_STATUS_INVALID_ARGUMENT);
  CHECK(kiln_model_symbol_count(nullptr) == 0);

  // Symbolic dimensions are -1, sizes the largest.
  kiln_tensor_info_t info;
  REQUIRE(codeOf(kiln_model_input_info(model, 1, &info)) == KILN_STATUS_OK);
  CHECK(std::vector<int64_t>(info.shape, info.shape + info.rank) == std::vector<int64_t>{-1, -1});
  CHECK(info.byte_size == 4 * 8 * 4);
  CHECK(std::string(kiln_model_input_dim(model, 1, 0)) == "batch");
  CHECK(std::string(kiln_model_input_dim(model, 1, 1)) == "seq");
  CHECK(kiln_model_input_dim(model, 0, 1) == nullptr); // static
  CHECK(kiln_model_input_dim(model, 0, 2) == nullptr); // past the rank
  CHECK(kiln_model_input_dim(model, 2, 0) == nullptr); // past the inputs
  CHECK(kiln_model_input_dim(nullptr, 0, 0) == nullptr);
  CHECK(std::string(kiln_model_output_dim(model, 1, 0)) == "batch * 2");
  CHECK(kiln_model_output_dim(model, 1, 1) == nullptr);
}

TEST_CASE("a symbolic model runs at every size in its ranges", "[runtime][symbolic]") {
  Symbolic loaded;
  const void *lastY = nullptr;
  size_t grown = 0;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {4, 8}, {2, 2}}) {
    Inputs in(batch, seq);
    kiln_tensor_t outputs[3] = {{"y"}, {"twice"}, {"top"}};
    REQUIRE(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, outputs, 3)) ==
            KILN_STATUS_OK);
    const kiln_tensor_t &y = outputs[0], &twice = outputs[1], &top = outputs[2];
    REQUIRE(y.rank == 2);
    CHECK(y.shape[0] == batch);
    CHECK(y.shape[1] == 4);
    CHECK(y.byte_size == size_t(batch * 4 * 4));
    REQUIRE(twice.rank == 2);
    CHECK(twice.shape[0] == 2 * batch);
    REQUIRE(top.rank == 1);
    CHECK(top.shape[0] == batch);
    auto *values = static_cast<const float *>(y.data);
    auto *both = static_cast<const float *>(twice.data);
    for (int64_t i = 0; i < batch * 4; ++i) {
      CHECK(values[i] == std::max(in.x[i], 0.0f));
      CHECK(both[i] == in.x[i]);
      CHECK(both[batch * 4 + i] == values[i]);
    }
    for (int64_t r = 0; r < batch; ++r)
      CHECK(static_cast<const float *>(top.data)[r] == float(r + seq - 1));
    // The session's buffers take the run's size and grow with it (to
    // twice the last, never past the largest: y of batch 1, 3, then 4); a
    // smaller run allocates nothing.
    if (y.data != lastY)
      ++grown;
    lastY = y.data;
  }
  CHECK(grown == 3);
}

TEST_CASE("a symbolic model writes outputs of the run's shape in place", "[runtime][symbolic]") {
  Symbolic loaded;
  Inputs in(2, 3);
  std::vector<float> y(8, -1.0f), twice(16), top(2);
  int64_t yShape[] = {2, 4}, twiceShape[] = {4, 4}, topShape[] = {2};
  kiln_tensor_t outputs[3] = {{"y", KILN_DTYPE_F32, 2, yShape, y.data(), 32},
                              {"twice", KILN_DTYPE_F32, 2, twiceShape, twice.data(), 64},
                              {"top", KILN_DTYPE_F32, 1, topShape, top.data(), 8}};
  REQUIRE(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, outputs, 3)) ==
          KILN_STATUS_OK);
  CHECK(y[0] == 0.0f);
  CHECK(y[7] == 4.0f);
  CHECK(top[1] == 3.0f);

  // An output buffer of the largest shape is not this run's.
  int64_t largest[] = {4, 4};
  std::vector<float> big(16);
  kiln_tensor_t wrong = {"y", KILN_DTYPE_F32, 2, largest, big.data(), 64};
  std::string message;
  CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, &wrong, 1), &message) ==
        KILN_STATUS_INVALID_ARGUMENT);
  CHECK(message == "output 'y' has shape 4x4; at these sizes the model expects 2x4 (batch x 4): "
                   "dimension 0 should be 2");
}

TEST_CASE("a symbolic model refuses sizes out of range or in disagreement", "[runtime][symbolic]") {
  Symbolic loaded;
  std::string message;
  {
    Inputs in(5, 2);
    CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, nullptr, 0), &message) ==
          KILN_STATUS_INVALID_ARGUMENT);
    CHECK(message == "input 'x' has 5 at dimension 0, which is 'batch'; the model takes 'batch' "
                     "from 1 to 4 (recompile with --input-shape to change it)");
  }
  {
    Inputs in(2, 9);
    CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, nullptr, 0), &message) ==
          KILN_STATUS_INVALID_ARGUMENT);
    CHECK(message == "input 'z' has 9 at dimension 1, which is 'seq'; the model takes 'seq' from "
                     "1 to 8 (recompile with --input-shape to change it)");
  }
  {
    Inputs in(2, 2);
    in.zShape[0] = 3;
    CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, nullptr, 0), &message) ==
          KILN_STATUS_INVALID_ARGUMENT);
    CHECK(message == "input 'z' has 3 at dimension 0, which is 'batch', but input 'x' gives "
                     "'batch' as 2 (its dimension 0)");
  }
  {
    Inputs in(2, 2);
    in.xShape[1] = 5;
    CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, nullptr, 0), &message) ==
          KILN_STATUS_INVALID_ARGUMENT);
    CHECK(message == "input 'x' has shape 2x5; at these sizes the model expects 2x4 (batch x 4): "
                     "dimension 1 should be 4");
  }
  {
    Inputs in(2, 2);
    in.tensors[0].rank = 1;
    CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, nullptr, 0), &message) ==
          KILN_STATUS_INVALID_ARGUMENT);
    CHECK(message == "input 'x' has 1 dimensions; the model expects 2 (batch x 4)");
  }
  {
    Inputs in(2, 2);
    in.tensors[1].byte_size = 4;
    CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, nullptr, 0), &message) ==
          KILN_STATUS_INVALID_ARGUMENT);
    CHECK(message == "input 'z' has 4 bytes; the model expects 16");
  }
  // After refused runs, a good one still runs.
  Inputs in(1, 1);
  kiln_tensor_t y = {"y"};
  CHECK(codeOf(kiln_session_run(loaded.session, in.tensors.data(), 2, &y, 1)) == KILN_STATUS_OK);
  CHECK(y.shape[0] == 1);
}
