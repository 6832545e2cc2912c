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
