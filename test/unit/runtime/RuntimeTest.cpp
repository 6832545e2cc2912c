// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime's C API: loading and verification, sessions, runs, and every
// kind of bad input getting a status rather than a crash.
//
// The tests load a small artifact (conv_relu: 1x3x32x32 -> 1x16x32x32) that
// CTest compiles first and names in $KILN_TEST_ARTIFACT.

#include "kiln/runtime.h"

#include "ArtifactBytes.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string artifactPath() {
  const char *path = std::getenv("KILN_TEST_ARTIFACT");
  REQUIRE(path);
  return path;
}

std::string readArtifact() { return readBytes(artifactPath()); }

/// Takes a status, returning its code and freeing it.
kiln_status_code_t codeOf(kiln_status_t status, std::string *message = nullptr) {
  kiln_status_code_t code = kiln_status_code(status);
  if (message)
    *message = kiln_status_message(status);
  kiln_status_free(status);
  return code;
}

const int64_t kInputShape[] = {1, 3, 32, 32};
const int64_t kOutputShape[] = {1, 16, 32, 32};
constexpr size_t kInputBytes = 1 * 3 * 32 * 32 * 4, kOutputBytes = 1 * 16 * 32 * 32 * 4;

/// An input of values from -(period / 2) * step up, repeating every
/// `period` elements: some negative, some positive.
std::vector<float> patternedInput(int period, float step) {
  std::vector<float> input(kInputBytes / 4);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = float(int(i % period) - period / 2) * step;
  return input;
}

struct Loaded {
  kiln_model_t *model = nullptr;
  kiln_session_t *session = nullptr;
  Loaded() {
    REQUIRE(codeOf(kiln_model_load_file(artifactPath().c_str(), nullptr, &model)) ==
            KILN_STATUS_OK);
    REQUIRE(codeOf(kiln_session_create(model, nullptr, &session)) == KILN_STATUS_OK);
  }
  ~Loaded() {
    kiln_session_destroy(session);
    kiln_model_release(model);
  }
};

} // namespace

TEST_CASE("a model describes its inputs and outputs", "[runtime]") {
  Loaded loaded;
  REQUIRE(kiln_model_input_count(loaded.model) == 1);
  REQUIRE(kiln_model_output_count(loaded.model) == 1);
  kiln_tensor_info_t info;
  REQUIRE(codeOf(kiln_model_input_info(loaded.model, 0, &info)) == KILN_STATUS_OK);
  CHECK(std::string(info.name) == "input");
  CHECK(info.dtype == KILN_DTYPE_F32);
  CHECK(std::vector<int64_t>(info.shape, info.shape + info.rank) ==
        std::vector<int64_t>(std::begin(kInputShape), std::end(kInputShape)));
  CHECK(info.byte_size == kInputBytes);
  REQUIRE(codeOf(kiln_model_output_info(loaded.model, 0, &info)) == KILN_STATUS_OK);
  CHECK(std::string(info.name) == "output");
  // Conv, bias and Relu are one kernel that writes the output: no arena.
  CHECK(kiln_model_arena_bytes(loaded.model) == 0);
  CHECK(codeOf(kiln_model_input_info(loaded.model, 1, &info)) == KILN_STATUS_INVALID_ARGUMENT);
  // `kiln compile` for the host: code for both x86-64 levels.
  REQUIRE(kiln_model_target_count(loaded.model) == 2);
  CHECK(std::string(kiln_model_target(loaded.model, 0)) == "x86-64-v4");
  CHECK(std::string(kiln_model_target(loaded.model, 1)) == "x86-64-v3");
  CHECK(kiln_model_target(loaded.model, 2) == nullptr);
}

TEST_CASE("runs are deterministic, in place or into session buffers", "[runtime]") {
  Loaded loaded;
  std::vector<float> input = patternedInput(7, 0.25f);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};

  kiln_tensor_t out = {"output", KILN_DTYPE_F32, 0, nullptr, nullptr, 0};
  REQUIRE(codeOf(kiln_session_run(loaded.session, &in, 1, &out, 1)) == KILN_STATUS_OK);
  REQUIRE(out.data);
  CHECK(out.rank == 4);
  CHECK(out.byte_size == kOutputBytes);
  std::vector<float> first(static_cast<float *>(out.data),
                           static_cast<float *>(out.data) + kOutputBytes / 4);
  // A ReLU's output is never negative, and this input makes some positive.
  CHECK(*std::min_element(first.begin(), first.end()) >= 0.0f);
  CHECK(*std::max_element(first.begin(), first.end()) > 0.0f);

  std::vector<float> mine(kOutputBytes / 4, -1.0f);
  kiln_tensor_t into = {"output", KILN_DTYPE_F32, 4, kOutputShape, mine.data(), kOutputBytes};
  REQUIRE(codeOf(kiln_session_run(loaded.session, &in, 1, &into, 1)) == KILN_STATUS_OK);
  CHECK(mine == first);

  // Outputs nobody asks for are computed and dropped.
  REQUIRE(codeOf(kiln_session_run(loaded.session, &in, 1, nullptr, 0)) == KILN_STATUS_OK);
}

TEST_CASE("a session writes each run's outputs into the same buffers, unless passed back in",
          "[runtime]") {
  Loaded loaded;
  std::vector<float> input = patternedInput(5, 0.5f);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  kiln_tensor_t out = {"output", KILN_DTYPE_F32, 0, nullptr, nullptr, 0};
  REQUIRE(codeOf(kiln_session_run(loaded.session, &in, 1, &out, 1)) == KILN_STATUS_OK);
  void *owned = out.data;
  std::vector<float> first(static_cast<float *>(owned),
                           static_cast<float *>(owned) + kOutputBytes / 4);

  // The next run reuses the buffer: no allocation, the same results.
  kiln_tensor_t again = {"output", KILN_DTYPE_F32, 0, nullptr, nullptr, 0};
  REQUIRE(codeOf(kiln_session_run(loaded.session, &in, 1, &again, 1)) == KILN_STATUS_OK);
  CHECK(again.data == owned);
  CHECK(std::equal(first.begin(), first.end(), static_cast<float *>(again.data)));

  // Given back as the output to write in place, it is refused: the
  // session would free it under the caller.
  kiln_tensor_t into = {"output", KILN_DTYPE_F32, 4, kOutputShape, owned, kOutputBytes};
  std::string message;
  CHECK(codeOf(kiln_session_run(loaded.session, &in, 1, &into, 1), &message) ==
        KILN_STATUS_INVALID_ARGUMENT);
  CHECK(message == "output 'output' is given a buffer the session owns (an earlier run's "
                   "output); give a buffer of your own, or none");
  CHECK(std::equal(first.begin(), first.end(), static_cast<float *>(owned)));

  // Given back as an input, it is read, and the output goes elsewhere.
  std::vector<float> fedBack(static_cast<float *>(owned),
                             static_cast<float *>(owned) + kInputBytes / 4);
  kiln_tensor_t fromOutput = {"input", KILN_DTYPE_F32, 4, kInputShape, owned, kInputBytes};
  kiln_tensor_t elsewhere = {"output", KILN_DTYPE_F32, 0, nullptr, nullptr, 0};
  REQUIRE(codeOf(kiln_session_run(loaded.session, &fromOutput, 1, &elsewhere, 1)) ==
          KILN_STATUS_OK);
  CHECK(elsewhere.data != owned);
  std::vector<float> expected(kOutputBytes / 4);
  kiln_tensor_t copyIn = {"input", KILN_DTYPE_F32, 4, kInputShape, fedBack.data(), kInputBytes};
  kiln_tensor_t copyOut = {"output",     KILN_DTYPE_F32,  4,
                           kOutputShape, expected.data(), kOutputBytes};
  std::vector<float> result(static_cast<float *>(elsewhere.data),
                            static_cast<float *>(elsewhere.data) + kOutputBytes / 4);
  REQUIRE(codeOf(kiln_session_run(loaded.session, &copyIn, 1, &copyOut, 1)) == KILN_STATUS_OK);
  CHECK(result == expected);
}

TEST_CASE("a model is shared by sessions on several threads", "[runtime]") {
  // 8 threads, a session each, 200 runs each: every result is the bits a
  // single-threaded run gives (the TSan build runs this too).
  constexpr int kThreads = 8, kRuns = 200;
  kiln_model_t *model = nullptr;
  REQUIRE(codeOf(kiln_model_load_file(artifactPath().c_str(), nullptr, &model)) == KILN_STATUS_OK);
  std::vector<float> input = patternedInput(7, 0.25f);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  std::vector<float> expected(kOutputBytes / 4);
  {
    kiln_session_options_t alone = {KILN_API_VERSION, "host", 1, 0};
    kiln_session_t *session = nullptr;
    REQUIRE(codeOf(kiln_session_create(model, &alone, &session)) == KILN_STATUS_OK);
    kiln_tensor_t out = {"output", KILN_DTYPE_F32, 4, kOutputShape, expected.data(), kOutputBytes};
    REQUIRE(codeOf(kiln_session_run(session, &in, 1, &out, 1)) == KILN_STATUS_OK);
    kiln_session_destroy(session);
  }
  std::vector<kiln_status_code_t> codes(kThreads, KILN_STATUS_INTERNAL);
  std::vector<int> identical(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      kiln_session_t *session = nullptr;
      codes[t] = codeOf(kiln_session_create(model, nullptr, &session));
      std::vector<float> result(kOutputBytes / 4);
      kiln_tensor_t out = {"output", KILN_DTYPE_F32, 4, kOutputShape, result.data(), kOutputBytes};
      for (int i = 0; i < kRuns && codes[t] == KILN_STATUS_OK; ++i) {
        std::fill(result.begin(), result.end(), -1.0f);
        codes[t] = codeOf(kiln_session_run(session, &in, 1, &out, 1));
        identical[t] += std::memcmp(result.data(), expected.data(), kOutputBytes) == 0;
      }
      kiln_session_destroy(session);
    });
  for (std::thread &thread : threads)
    thread.join();
  kiln_model_release(model); // the sessions held their own references
  for (int t = 0; t < kThreads; ++t) {
    CHECK(codes[t] == KILN_STATUS_OK);
    CHECK(identical[t] == kRuns);
  }
}

TEST_CASE("a session runs on the threads it is given, with the same results", "[runtime]") {
  kiln_model_t *model = nullptr;
  REQUIRE(codeOf(kiln_model_load_file(artifactPath().c_str(), nullptr, &model)) == KILN_STATUS_OK);
  std::vector<float> input(kInputBytes / 4);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = float(int(i % 11) - 5) * 0.125f;
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  auto runOn = [&](const kiln_session_options_t &options, uint32_t *threads) {
    std::vector<float> result(kOutputBytes / 4);
    kiln_session_t *session = nullptr;
    REQUIRE(codeOf(kiln_session_create(model, &options, &session)) == KILN_STATUS_OK);
    *threads = kiln_session_threads(session);
    kiln_tensor_t out = {"output", KILN_DTYPE_F32, 4, kOutputShape, result.data(), kOutputBytes};
    for (int i = 0; i < 3; ++i)
      REQUIRE(codeOf(kiln_session_run(session, &in, 1, &out, 1)) == KILN_STATUS_OK);
    kiln_session_destroy(session);
    return result;
  };
  uint32_t threads = 0;
  std::vector<float> alone = runOn({KILN_API_VERSION, "host", 1}, &threads);
  CHECK(threads == 1);
  for (uint32_t count : {2u, 3u, 8u}) {
    CHECK(runOn({KILN_API_VERSION, "host", count}, &threads) == alone);
    CHECK(threads == count);
  }
  // 0 means every CPU; so do options from before the field existed.
  unsigned cpus = std::thread::hardware_concurrency();
  CHECK(runOn({KILN_API_VERSION, "host", 0}, &threads) == alone);
  CHECK(threads >= 1);
  CHECK((cpus == 0 || threads <= cpus));
  uint32_t defaults = threads;
  CHECK(runOn({1, "host", 5}, &threads) == alone);
  CHECK(threads == defaults);
  CHECK(kiln_session_threads(nullptr) == 0);
  kiln_model_release(model);
}

TEST_CASE("a host session names its code's target and times its kernels", "[runtime]") {
  // The host code reports each kernel's end: with the flag, each run has a
  // profile of as many kernels as the manifest lists; without it, none.
  kiln_model_t *model = nullptr;
  REQUIRE(codeOf(kiln_model_load_file(artifactPath().c_str(), nullptr, &model)) == KILN_STATUS_OK);
  std::vector<float> input(kInputBytes / 4, 0.5f), result(kOutputBytes / 4);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  kiln_tensor_t out = {"output", KILN_DTYPE_F32, 4, kOutputShape, result.data(), kOutputBytes};
  for (uint32_t flags : {0u, KILN_SESSION_PROFILE}) {
    kiln_session_options_t options = {KILN_API_VERSION, "host", 1, flags};
    kiln_session_t *session = nullptr;
    REQUIRE(codeOf(kiln_session_create(model, &options, &session)) == KILN_STATUS_OK);
    CHECK(std::string(kiln_session_target(session)).rfind("x86-64", 0) == 0);
    double milliseconds = -1.0;
    CHECK(kiln_session_kernel_profile(session, &milliseconds, 1) == 0);
    REQUIRE(codeOf(kiln_session_run(session, &in, 1, &out, 1)) == KILN_STATUS_OK);
    if (flags) {
      // The model is one convolution, its ReLU fused: one kernel.
      CHECK(kiln_session_kernel_profile(session, nullptr, 0) == 1);
      CHECK(kiln_session_kernel_profile(session, &milliseconds, 1) == 1);
      CHECK(milliseconds >= 0.0);
    } else {
      CHECK(kiln_session_kernel_profile(session, &milliseconds, 1) == 0);
      CHECK(milliseconds == -1.0);
    }
    kiln_session_destroy(session);
  }
  double milliseconds = -1.0;
  CHECK(kiln_session_kernel_profile(nullptr, &milliseconds, 1) == 0);
  CHECK(std::string(kiln_session_target(nullptr)).empty());
  kiln_model_release(model);
}

TEST_CASE("bad arguments get statuses", "[runtime]") {
  kiln_model_t *model = nullptr;
  CHECK(codeOf(kiln_model_load_file(nullptr, nullptr, &model)) == KILN_STATUS_INVALID_ARGUMENT);
  CHECK(codeOf(kiln_model_load_file("x", nullptr, nullptr)) == KILN_STATUS_INVALID_ARGUMENT);
  CHECK(codeOf(kiln_model_load_memory(nullptr, 10, nullptr, &model)) ==
        KILN_STATUS_INVALID_ARGUMENT);
  std::string message;
  CHECK(codeOf(kiln_model_load_file("/nonexistent/model.kiln", nullptr, &model), &message) ==
        KILN_STATUS_NOT_FOUND);
  CHECK(message.find("/nonexistent/model.kiln") != std::string::npos);
  CHECK(codeOf(kiln_session_create(nullptr, nullptr, nullptr)) == KILN_STATUS_INVALID_ARGUMENT);
  CHECK(codeOf(kiln_session_run(nullptr, nullptr, 0, nullptr, 0)) == KILN_STATUS_INVALID_ARGUMENT);
  kiln_model_options_t future = {KILN_API_VERSION + 1};
  CHECK(codeOf(kiln_model_load_file(artifactPath().c_str(), &future, &model)) ==
        KILN_STATUS_UNIMPLEMENTED);
  // NULL is a valid status, model and session for the query and free calls.
  CHECK(kiln_status_code(nullptr) == KILN_STATUS_OK);
  CHECK(std::string(kiln_status_message(nullptr)).empty());
  kiln_status_free(nullptr);
  kiln_model_release(nullptr);
  kiln_session_destroy(nullptr);
  CHECK(kiln_model_input_count(nullptr) == 0);
  CHECK(kiln_model_target_count(nullptr) == 0);
  CHECK(kiln_model_target(nullptr, 0) == nullptr);
}

TEST_CASE("devices this runtime cannot use are refused", "[runtime]") {
  Loaded loaded;
  kiln_session_options_t options = {KILN_API_VERSION, "cuda:0"};
  kiln_session_t *session = nullptr;
  std::string message;
  CHECK(codeOf(kiln_session_create(loaded.model, &options, &session), &message) ==
        KILN_STATUS_UNAVAILABLE);
  CHECK(message.find("cuda:0") != std::string::npos);
  CHECK(session == nullptr);
}

TEST_CASE("wrong inputs and outputs are named in the status", "[runtime]") {
  Loaded loaded;
  std::vector<float> input(kInputBytes / 4, 1.0f), output(kOutputBytes / 4);
  kiln_tensor_t good = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  auto run = [&](std::vector<kiln_tensor_t> ins, std::vector<kiln_tensor_t> outs) {
    std::string message;
    kiln_status_code_t code =
        codeOf(kiln_session_run(loaded.session, ins.data(), ins.size(), outs.data(), outs.size()),
               &message);
    CHECK(code == KILN_STATUS_INVALID_ARGUMENT);
    return message;
  };
  CHECK(run({}, {}) == "input 'input' is missing");
  kiln_tensor_t unknown = good;
  unknown.name = "image";
  CHECK(run({unknown}, {}) == "the model has no input named 'image'");
  CHECK(run({good, good}, {}) == "input 'input' is given twice");
  kiln_tensor_t wrongType = good;
  wrongType.dtype = KILN_DTYPE_F16;
  CHECK(run({wrongType}, {}) == "input 'input' has dtype f16; the model expects f32");
  // A dtype that is no enumerator is read as the integer it is.
  uint32_t invalid = 999;
  std::memcpy(&wrongType.dtype, &invalid, sizeof(invalid));
  CHECK(run({wrongType}, {}) == "input 'input' has dtype unknown (999); the model expects f32");
  const int64_t otherShape[] = {1, 3, 16, 64};
  kiln_tensor_t wrongShape = good;
  wrongShape.shape = otherShape;
  CHECK(run({wrongShape}, {}) == "input 'input' has the wrong shape; the model expects 1x3x32x32");
  kiln_tensor_t wrongSize = good;
  wrongSize.byte_size = 12;
  CHECK(run({wrongSize}, {}) == "input 'input' has 12 bytes; the model expects 12288");
  kiln_tensor_t noData = good;
  noData.data = nullptr;
  CHECK(run({noData}, {}) == "input 'input' has no data");
  kiln_tensor_t badOutput = {"output", KILN_DTYPE_F32, 4, kOutputShape, output.data(), 4};
  CHECK(run({good}, {badOutput}) == "output 'output' has 4 bytes; the model expects 65536");
  kiln_tensor_t unknownOutput = {"logits", KILN_DTYPE_F32, 0, nullptr, nullptr, 0};
  CHECK(run({good}, {unknownOutput}) == "the model has no output named 'logits'");
}

TEST_CASE("truncated and corrupt artifacts are refused", "[runtime][verify]") {
  std::string bytes = readArtifact();
  auto load = [](const std::string &data, std::string *message = nullptr) {
    kiln_model_t *model = nullptr;
    kiln_status_code_t code =
        codeOf(kiln_model_load_memory(data.data(), data.size(), nullptr, &model), message);
    kiln_model_release(model);
    return code;
  };
  REQUIRE(load(bytes) == KILN_STATUS_OK);

  std::string message;
  CHECK(load(bytes.substr(0, 10), &message) == KILN_STATUS_DATA_LOSS);
  CHECK(message == "not a kiln artifact: only 10 bytes");
  for (size_t size : {size_t(0), size_t(64), bytes.size() / 2, bytes.size() - 1})
    CHECK(load(bytes.substr(0, size)) == KILN_STATUS_DATA_LOSS);
  std::string sentence = "This is not a kiln artifact; it is a sentence, said again and again. ";
  while (sentence.size() < KILN_HEADER_SIZE)
    sentence += sentence;
  CHECK(load(sentence, &message) == KILN_STATUS_DATA_LOSS);
  CHECK(message == "not a kiln artifact (wrong magic number)");

  // Every single-byte change anywhere is caught (a bumped format version is
  // reported as such, a changed signer as a signature that fails).
  size_t caught = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string changed = bytes;
    changed[i] = char(changed[i] ^ 0x5a);
    kiln_status_code_t code = load(changed);
    caught += code == KILN_STATUS_DATA_LOSS || code == KILN_STATUS_UNIMPLEMENTED ||
              code == KILN_STATUS_PERMISSION_DENIED;
  }
  CHECK(caught == bytes.size());
}

TEST_CASE("other format versions are named", "[runtime][verify]") {
  for (uint32_t version : {KILN_FORMAT_VERSION - 1, KILN_FORMAT_VERSION + 1}) {
    std::string bytes = readArtifact();
    kiln_file_header_t header;
    std::memcpy(&header, bytes.data(), sizeof(header));
    header.format_version = version;
    std::memcpy(bytes.data(), &header, sizeof(header));
    reseal(bytes);
    kiln_model_t *model = nullptr;
    std::string message;
    CHECK(codeOf(kiln_model_load_memory(bytes.data(), bytes.size(), nullptr, &model), &message) ==
          KILN_STATUS_UNIMPLEMENTED);
    std::string named = "the artifact has format version " + std::to_string(version);
    CHECK(message.find(named) == 0);
    CHECK(message.find("this runtime reads version " + std::to_string(KILN_FORMAT_VERSION)) !=
          std::string::npos);
  }
}

/// Re-labels the artifact's host code for `from` as code for `to` (names of
/// the same length) and re-seals the file.
void relabel(std::string &bytes, const std::string &from, const std::string &to) {
  size_t at = bytes.find(from);
  REQUIRE(at != std::string::npos);
  bytes.replace(at, to.size(), to);
  reseal(bytes);
}

TEST_CASE("code for a CPU level this machine lacks is refused", "[runtime][verify]") {
  // As if compiled for levels no CPU has.
  std::string bytes = readArtifact();
  relabel(bytes, "x86-64-v4", "x86-64-v8");
  relabel(bytes, "x86-64-v3", "x86-64-v9");
  kiln_model_t *model = nullptr;
  std::string message;
  CHECK(codeOf(kiln_model_load_memory(bytes.data(), bytes.size(), nullptr, &model), &message) ==
        KILN_STATUS_UNAVAILABLE);
  CHECK(message.find("the host code was compiled for x86-64-v8, x86-64-v9, which this CPU does "
                     "not support") == 0);
}

TEST_CASE("the host runs the best level of code the CPU has", "[runtime]") {
  // The artifact has code for x86-64-v4 and x86-64-v3; KILN_HOST_LEVEL
  // lowers the level the runtime assumes.
  __builtin_cpu_init();
  std::string best = __builtin_cpu_supports("x86-64-v4") ? "x86-64-v4" : "x86-64-v3";
  for (const char *cap : {static_cast<const char *>(nullptr), "x86-64-v3"}) {
    if (cap)
      setenv("KILN_HOST_LEVEL", cap, 1);
    kiln_model_t *model = nullptr;
    REQUIRE(codeOf(kiln_model_load_file(artifactPath().c_str(), nullptr, &model)) ==
            KILN_STATUS_OK);
    kiln_session_t *session = nullptr;
    kiln_session_options_t options = {KILN_API_VERSION, "host", 1, 0};
    REQUIRE(codeOf(kiln_session_create(model, &options, &session)) == KILN_STATUS_OK);
    CHECK(std::string(kiln_session_target(session)) == (cap ? cap : best));
    kiln_session_destroy(session);
    kiln_model_release(model);
  }
  unsetenv("KILN_HOST_LEVEL");
  // Two sections for one level are a corrupt artifact.
  std::string bytes = readArtifact();
  relabel(bytes, "x86-64-v4", "x86-64-v3");
  kiln_model_t *model = nullptr;
  std::string message;
  CHECK(codeOf(kiln_model_load_memory(bytes.data(), bytes.size(), nullptr, &model), &message) ==
        KILN_STATUS_DATA_LOSS);
  CHECK(message == "corrupt artifact: two sections of host code for x86-64-v3");
}

TEST_CASE("a model loaded without its code describes itself but does not run", "[runtime]") {
  std::string bytes = readArtifact();
  kiln_model_options_t options = {KILN_API_VERSION, KILN_MODEL_LOAD_NO_CODE};
  kiln_model_t *model = nullptr;
  REQUIRE(codeOf(kiln_model_load_memory(bytes.data(), bytes.size(), &options, &model)) ==
          KILN_STATUS_OK);
  CHECK(kiln_model_input_count(model) == 1);
  kiln_session_t *session = nullptr;
  std::string message;
  CHECK(codeOf(kiln_session_create(model, nullptr, &session), &message) == KILN_STATUS_UNAVAILABLE);
  CHECK(message == "the model was loaded without its code and cannot run");
  kiln_model_release(model);
}

TEST_CASE("models loaded side by side keep their own code", "[runtime]") {
  // Each model's code lives in its own anonymous file for as long as the
  // model does; loading, freeing and reloading must not mix them up.
  std::vector<kiln_model_t *> models(3, nullptr);
  for (kiln_model_t *&model : models)
    REQUIRE(codeOf(kiln_model_load_file(artifactPath().c_str(), nullptr, &model)) ==
            KILN_STATUS_OK);
  kiln_model_release(models[1]);
  REQUIRE(codeOf(kiln_model_load_file(artifactPath().c_str(), nullptr, &models[1])) ==
          KILN_STATUS_OK);
  for (kiln_model_t *model : models) {
    kiln_session_t *session = nullptr;
    REQUIRE(codeOf(kiln_session_create(model, nullptr, &session)) == KILN_STATUS_OK);
    std::vector<float> input(kInputBytes / 4, 1.0f);
    kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
    CHECK(codeOf(kiln_session_run(session, &in, 1, nullptr, 0)) == KILN_STATUS_OK);
    kiln_session_destroy(session);
    kiln_model_release(model);
  }
}
