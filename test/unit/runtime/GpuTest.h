// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the GPU devices' tests (CudaTest.cpp, HipTest.cpp) share: the
// artifacts CTest compiles for them into $KILN_TEST_ARTIFACTS, the fake
// driver's controls, and opening and running sessions through the C API.

#ifndef KILN_TEST_UNIT_RUNTIME_GPUTEST_H
#define KILN_TEST_UNIT_RUNTIME_GPUTEST_H

#include "ArtifactBytes.h"
#include "kiln/runtime.h"
#include "runtime/format/artifact_generated.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <string>
#include <utility>
#include <vector>

inline std::string artifact(const char *name) {
  const char *dir = std::getenv("KILN_TEST_ARTIFACTS");
  REQUIRE(dir);
  return std::string(dir) + "/" + name;
}

/// Checks that the fake driver `library` (`control` tells it from a real
/// one) defines each of `names`: the entry points the runtime resolves, as
/// the driver's symbol table lists them (the caller expands the table).
template <size_t N>
inline void checkDefinesEntryPoints(const char *library, const char *control,
                                    const char *const (&names)[N]) {
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle);
  REQUIRE(dlsym(handle, control));
  CHECK(N > 30);
  for (const char *name : names) {
    INFO(name);
    CHECK(dlsym(handle, name));
  }
  dlclose(handle);
}

/// A fake driver's controls (FakeGpu.h), from the same library the runtime
/// opens (first on LD_LIBRARY_PATH), reset and then given `settings`.
struct FakeDriver {
  void (*set)(const char *, long);
  long (*get)(const char *);
  FakeDriver(const char *library, const std::string &prefix,
             const std::map<std::string, long> &settings = {}) {
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(handle);
    set = reinterpret_cast<void (*)(const char *, long)>(dlsym(handle, (prefix + "_set").c_str()));
    get = reinterpret_cast<long (*)(const char *)>(dlsym(handle, (prefix + "_get").c_str()));
    REQUIRE(set);
    REQUIRE(get);
    set("reset", 1);
    for (const auto &[key, value] : settings)
      set(key.c_str(), value);
  }
};

inline kiln_status_code_t codeOf(kiln_status_t status, std::string *message = nullptr) {
  kiln_status_code_t code = kiln_status_code(status);
  if (message)
    *message = kiln_status_message(status);
  kiln_status_free(status);
  return code;
}

inline kiln_model_t *load(const char *name) {
  kiln_model_t *model = nullptr;
  REQUIRE(codeOf(kiln_model_load_file(artifact(name).c_str(), nullptr, &model)) == KILN_STATUS_OK);
  return model;
}

inline kiln_status_code_t open(kiln_model_t *model, const char *device, kiln_session_t **session,
                               std::string *message = nullptr, uint32_t flags = 0) {
  kiln_session_options_t options = {KILN_API_VERSION, device, 0, flags};
  *session = nullptr;
  return codeOf(kiln_session_create(model, &options, session), message);
}

// conv_relu's signature.
const int64_t kInputShape[] = {1, 3, 32, 32};
constexpr size_t kInputBytes = 1 * 3 * 32 * 32 * 4, kOutputBytes = 1 * 16 * 32 * 32 * 4;

/// Runs conv_relu once; the fakes run no kernels, so the outputs come back
/// as the zeros the device memory started as.
inline kiln_status_code_t runOnce(kiln_session_t *session, std::string *message = nullptr) {
  std::vector<float> input(kInputBytes / 4, 1.0f), output(kOutputBytes / 4, -1.0f);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  const int64_t outputShape[] = {1, 16, 32, 32};
  kiln_tensor_t out = {"output", KILN_DTYPE_F32, 4, outputShape, output.data(), kOutputBytes};
  kiln_status_code_t code = codeOf(kiln_session_run(session, &in, 1, &out, 1), message);
  if (code == KILN_STATUS_OK)
    CHECK(output == std::vector<float>(kOutputBytes / 4, 0.0f));
  return code;
}

/// Runs conv_relu once, asynchronously, on `device`: the session's own
/// output buffer is described at once, and written (by the one sync) when
/// the run is waited for.
inline void checkAsyncRun(kiln_model_t *model, const char *device, const FakeDriver &fake) {
  kiln_session_t *session;
  REQUIRE(open(model, device, &session) == KILN_STATUS_OK);
  std::vector<float> input(kInputBytes / 4, 1.0f);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  kiln_tensor_t out = {"output"};
  REQUIRE(codeOf(kiln_session_run_async(session, &in, 1, &out, 1)) == KILN_STATUS_OK);
  long syncs = fake.get("syncs");
  REQUIRE(out.data);
  CHECK(out.byte_size == kOutputBytes);
  std::memset(out.data, 0xff, kOutputBytes);
  CHECK(codeOf(kiln_session_wait(session)) == KILN_STATUS_OK);
  CHECK(fake.get("syncs") == syncs + 1);
  CHECK(std::vector<float>(static_cast<float *>(out.data),
                           static_cast<float *>(out.data) + kOutputBytes / 4) ==
        std::vector<float>(kOutputBytes / 4, 0.0f));
  // Waiting again has nothing to wait for.
  CHECK(codeOf(kiln_session_wait(session)) == KILN_STATUS_OK);
  CHECK(fake.get("syncs") == syncs + 1);
  kiln_session_destroy(session);
}

/// Runs symbolic.onnx (compiled with x=1..2048x4, z=1..2048x1..64; its
/// outputs y = Relu(x), twice = Concat(x, y), top = ReduceMax(z, axis 1))
/// at several sizes from one session, without a graph (its launches change
/// with the sizes): each run launches its 5 kernels on the grids its sizes
/// give, every pointer into device memory, and returns outputs of the
/// run's shapes. Relu writes into the second half of `twice` (in place),
/// which lies at a run's offset whose alignment no one knows, and y is
/// copied from there: a thread of Relu and of each copy takes one element,
/// of the fill and the reduction a row: 2 * ceil(batch / 256) + 3 *
/// ceil(4 * batch / 256) blocks of 256 threads, as `kiln inspect` shows
/// the grids.
inline void checkSymbolicRuns(kiln_model_t *model, const char *device, const FakeDriver &fake) {
  kiln_session_t *session;
  REQUIRE(open(model, device, &session) == KILN_STATUS_OK);
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {1000, 50}, {2048, 64}, {3, 7}}) {
    INFO("batch " << batch << ", seq " << seq);
    long runs = fake.get("kernels run"), blocks = fake.get("blocks");
    std::vector<float> x(batch * 4, 1.0f), z(batch * seq, 2.0f);
    const int64_t xShape[] = {batch, 4}, zShape[] = {batch, seq};
    kiln_tensor_t in[] = {{"x", KILN_DTYPE_F32, 2, xShape, x.data(), x.size() * 4},
                          {"z", KILN_DTYPE_F32, 2, zShape, z.data(), z.size() * 4}};
    kiln_tensor_t out[] = {{"y"}, {"twice"}, {"top"}};
    REQUIRE(codeOf(kiln_session_run(session, in, 2, out, 3)) == KILN_STATUS_OK);
    CHECK(out[0].shape[0] == batch);
    CHECK(out[1].shape[0] == 2 * batch);
    CHECK(out[2].rank == 1);
    CHECK(out[2].shape[0] == batch);
    CHECK(out[1].byte_size == size_t(2 * batch * 4 * 4));
    CHECK(fake.get("kernels run") == runs + 5);
    CHECK(fake.get("blocks") == blocks + 2 * ((batch + 255) / 256) + 3 * ((4 * batch + 255) / 256));
    CHECK(fake.get("bad pointers") == 0);
    CHECK(fake.get("bad launches") == 0);
  }
  CHECK(fake.get("graphs") == 0);
  // A size past the range is refused before anything is launched.
  long launches = fake.get("launches");
  std::vector<float> x(2049 * 4), z(2049);
  const int64_t xShape[] = {2049, 4}, zShape[] = {2049, 1};
  kiln_tensor_t in[] = {{"x", KILN_DTYPE_F32, 2, xShape, x.data(), x.size() * 4},
                        {"z", KILN_DTYPE_F32, 2, zShape, z.data(), z.size() * 4}};
  kiln_tensor_t out[] = {{"y"}, {"twice"}, {"top"}};
  std::string message;
  CHECK(codeOf(kiln_session_run(session, in, 2, out, 3), &message) == KILN_STATUS_INVALID_ARGUMENT);
  CHECK(message.find("'batch' from 1 to 2048") != std::string::npos);
  CHECK(fake.get("launches") == launches);
  kiln_session_destroy(session);
}

/// Gives the first launch of the plan for `target` one more block in x,
/// and seals the artifact again; the blocks it now has.
inline uint32_t addBlock(std::string &bytes, const std::string &target) {
  kiln_file_header_t header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  const auto *manifest = kiln::artifact::GetModel(bytes.data() + header.manifest_offset);
  const kiln::artifact::Launch *launch = nullptr;
  for (const kiln::artifact::Code *code : *manifest->code())
    if (code->target()->str() == target)
      for (const kiln::artifact::Kernel *kernel : *manifest->plans()->Get(code->plan())->kernels())
        if (!launch && kernel->launch())
          launch = kernel->launch();
  REQUIRE(launch);
  size_t at = reinterpret_cast<const char *>(launch->grid()->data()) - bytes.data();
  uint32_t blocks;
  std::memcpy(&blocks, bytes.data() + at, 4);
  ++blocks;
  std::memcpy(bytes.data() + at, &blocks, 4);
  reseal(bytes);
  return blocks;
}

#endif // KILN_TEST_UNIT_RUNTIME_GPUTEST_H
