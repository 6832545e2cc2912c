// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime's HIP device, against the fake runtime in FakeHip.cpp (found
// as libamdhip64.so through LD_LIBRARY_PATH): choosing the code object for
// the GPU's architecture, uploading weights once, one allocation per
// session, launches whose arguments fill each kernel's argument segment as
// its metadata lays it out and point into device memory, HIP graphs,
// profiles, asynchronous runs, and the errors a GPU can give. Every plan of
// the model tests (ResNet-50, MobileNetV2, BERT) runs through it.
//
// Tagged [real]: Debian's real libamdhip64 (tools/setup.sh installs it),
// on a machine without an AMD GPU, gives the clean no-device status. CTest
// runs those without the fake.
//
// CTest compiles conv_relu for host,gfx90a,gfx942 (hip.kiln), the three
// models for gfx90a,gfx942, and symbolic.onnx's batch and sequence for
// gfx942 (symbolic.kiln) into $KILN_TEST_ARTIFACTS.

#include "GpuTest.h"

#include <cstring>

namespace {

constexpr long kGfx942 = 0x4c, kGfx90a = 0x3f;

/// The fake HIP runtime (FakeHip.cpp): one gfx942 GPU.
struct Fake : FakeDriver {
  explicit Fake(long arch = kGfx942)
      : FakeDriver("libamdhip64.so", "kiln_fake_hip", {{"arch", arch}}) {}
};

} // namespace

TEST_CASE("the fake runtime defines every entry point the runtime resolves", "[hip]") {
  const char *const names[] = {
#define KILN_HIP_SYMBOL(member, symbol, result, parameters) #symbol,
#include "runtime/src/hip/HipSymbolTables.h"
  };
  checkDefinesEntryPoints("libamdhip64.so", "kiln_fake_hip_get", names);
}

TEST_CASE("a session runs the code object for its GPU, as one HIP graph", "[hip]") {
  Fake fake;
  kiln_model_t *model = load("hip.kiln");
  kiln_session_t *session;
  REQUIRE(open(model, "hip:0", &session) == KILN_STATUS_OK);
  CHECK(std::string(kiln_session_device(session)) ==
        "hip:0 (Fake AMD GPU, gfx942, code object for gfx942)");
  CHECK(std::string(kiln_session_target(session)) == "gfx942");
  CHECK(fake.get("code objects loaded") == 1);
  CHECK(fake.get("graphs") == 1);
  // The weights, then nothing more until a run.
  CHECK(fake.get("uploads") == 1);
  CHECK(fake.get("allocations") == 2);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  CHECK(fake.get("graph launches") == 2);
  CHECK(fake.get("launches") > 0);
  CHECK(fake.get("kernels run") == 2 * fake.get("launches"));
  CHECK(fake.get("bad launches") == 0);
  CHECK(fake.get("bad pointers") == 0);
  // The GPU is made current for each call, and the thread's restored.
  CHECK(fake.get("device switches") > 0);
  kiln_session_destroy(session);
  kiln_model_release(model);
  CHECK(fake.get("allocations") == 0);
  CHECK(fake.get("modules") == 0);
}

TEST_CASE("the code object is the one for the GPU's architecture", "[hip]") {
  // What a session on a GPU of architecture `arch` runs, or why not.
  auto runs = [](long arch) {
    Fake fake(arch);
    kiln_model_t *model = load("hip.kiln");
    kiln_session_t *session;
    std::string message;
    if (open(model, "hip:0", &session, &message) == KILN_STATUS_OK) {
      message = kiln_session_device(session);
      CHECK(runOnce(session) == KILN_STATUS_OK);
      CHECK(fake.get("bad launches") == 0);
    }
    kiln_session_destroy(session);
    kiln_model_release(model);
    return message;
  };
  CHECK(runs(kGfx942) == "hip:0 (Fake AMD GPU, gfx942, code object for gfx942)");
  CHECK(runs(kGfx90a) == "hip:0 (Fake AMD GPU, gfx90a, code object for gfx90a)");
  CHECK(runs(0x41) == "hip:0 (Fake AMD GPU) is gfx000, and the artifact has no code for it (it "
                      "holds code for x86-64-v4, x86-64-v3, gfx90a, gfx942); compile with "
                      "--target gfx000");
}

TEST_CASE("every model plan runs through the HIP device", "[hip]") {
  for (const char *name : {"resnet50.kiln", "mobilenetv2.kiln", "bert.kiln"})
    for (long arch : {kGfx942, kGfx90a}) {
      INFO(name << " on " << (arch == kGfx942 ? "gfx942" : "gfx90a"));
      for (uint32_t flags : {0u, unsigned(KILN_SESSION_NO_GRAPH)}) {
        Fake fake(arch);
        kiln_model_t *model = load(name);
        kiln_session_t *session;
        std::string message;
        REQUIRE(open(model, "hip:0", &session, &message, flags) == KILN_STATUS_OK);
        // The inputs as the model declares them, zeros.
        std::vector<std::vector<uint8_t>> data;
        std::vector<kiln_tensor_t> inputs;
        std::vector<kiln_tensor_info_t> infos(kiln_model_input_count(model));
        for (size_t i = 0; i < infos.size(); ++i) {
          REQUIRE(codeOf(kiln_model_input_info(model, i, &infos[i])) == KILN_STATUS_OK);
          data.emplace_back(infos[i].byte_size);
          inputs.push_back({infos[i].name, infos[i].dtype, infos[i].rank, infos[i].shape,
                            data.back().data(), infos[i].byte_size});
        }
        CHECK(codeOf(kiln_session_run(session, inputs.data(), inputs.size(), nullptr, 0),
                     &message) == KILN_STATUS_OK);
        CHECK(fake.get("launches") > 10);
        CHECK(fake.get("kernels run") == fake.get("launches"));
        CHECK(fake.get("graphs") == (flags ? 0 : 1));
        CHECK(fake.get("bad launches") == 0);
        CHECK(fake.get("bad pointers") == 0);
        kiln_session_destroy(session);
        kiln_model_release(model);
        CHECK(fake.get("allocations") == 0);
      }
    }
}

TEST_CASE("a symbolic HIP plan launches on the grids each run's sizes give", "[hip]") {
  Fake fake;
  kiln_model_t *model = load("symbolic.kiln");
  checkSymbolicRuns(model, "hip:0", fake);
  kiln_model_release(model);
}

TEST_CASE("a profiled HIP session times each kernel", "[hip]") {
  Fake fake;
  kiln_model_t *model = load("hip.kiln");
  kiln_session_t *session;
  REQUIRE(open(model, "hip:0", &session, nullptr, KILN_SESSION_PROFILE) == KILN_STATUS_OK);
  CHECK(fake.get("graphs") == 0);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  size_t kernels = kiln_session_kernel_profile(session, nullptr, 0);
  CHECK(long(kernels) == fake.get("launches"));
  // The fake's events count the kernels run: each takes "1 ms".
  std::vector<double> profile(kernels, -1.0);
  REQUIRE(kiln_session_kernel_profile(session, profile.data(), profile.size()) == kernels);
  CHECK(profile == std::vector<double>(kernels, 1.0));
  CHECK(kiln_session_kernel_milliseconds(session) == double(kernels));
  kiln_session_destroy(session);
  kiln_model_release(model);
}

TEST_CASE("an asynchronous HIP run finishes at the wait", "[hip]") {
  Fake fake;
  kiln_model_t *model = load("hip.kiln");
  checkAsyncRun(model, "hip:0", fake);
  kiln_model_release(model);
}

TEST_CASE("HIP errors are statuses that name them", "[hip]") {
  Fake fake;
  kiln_model_t *model = load("hip.kiln");
  kiln_session_t *session;
  std::string message;

  // Room for the weights but not the session.
  fake.set("memory", 4096);
  CHECK(open(model, "hip:0", &session, &message) == KILN_STATUS_RESOURCE_EXHAUSTED);
  CHECK(message.find("hip:0: cannot allocate the session's ") == 0);
  CHECK(message.find("hipErrorOutOfMemory") != std::string::npos);
  fake.set("memory", 1L << 40);

  // A failed kernel fails the run and the session.
  REQUIRE(open(model, "hip:0", &session) == KILN_STATUS_OK);
  fake.set("fail kernels", 719);
  CHECK(runOnce(session, &message) == KILN_STATUS_INTERNAL);
  CHECK(message == "hip:0: a kernel failed: hipErrorLaunchFailure: an error the fake runtime "
                   "made; the GPU context cannot recover, so this session cannot run again");
  CHECK(runOnce(session, &message) == KILN_STATUS_INTERNAL);
  kiln_session_destroy(session);
  fake.set("fail kernels", 0);

  // GPUs that are not there.
  CHECK(open(model, "hip:3", &session, &message) == KILN_STATUS_UNAVAILABLE);
  CHECK(message == "device 'hip:3' is not available: this machine has 1 AMD GPU");
  CHECK(open(model, "hip:x", &session, &message) == KILN_STATUS_INVALID_ARGUMENT);
  CHECK(message == "device 'hip:x': expected hip:N, N the GPU's number from 0");
  kiln_model_release(model);
  model = load("hip.kiln");
  fake.set("devices", 0);
  CHECK(open(model, "hip:0", &session, &message) == KILN_STATUS_UNAVAILABLE);
  CHECK(message == "device 'hip:0' is not available: this machine has no AMD GPU "
                   "(libamdhip64.so found none: hipErrorNoDevice: an error the fake runtime "
                   "made)");
  kiln_model_release(model);
  CHECK(fake.get("allocations") == 0);
}

TEST_CASE("a launch its code object was not compiled for is refused", "[hip][verify]") {
  Fake fake;
  std::string bytes = readBytes(artifact("hip.kiln"));
  uint32_t blocks = addBlock(bytes, "gfx942");
  kiln_model_t *model = nullptr;
  REQUIRE(codeOf(kiln_model_load_memory(bytes.data(), bytes.size(), nullptr, &model)) ==
          KILN_STATUS_OK);
  kiln_session_t *session = nullptr;
  std::string message;
  CHECK(open(model, "hip:0", &session, &message) == KILN_STATUS_DATA_LOSS);
  CHECK(message.rfind("corrupt artifact: the gfx942 code does not match the manifest: the "
                      "manifest says `launch 0 ",
                      0) == 0);
  CHECK(message.find("grid " + std::to_string(blocks) + "x") != std::string::npos);
  kiln_model_release(model);
  CHECK(fake.get("allocations") == 0);
}

TEST_CASE("without an AMD GPU the real HIP runtime gives a clean status", "[real]") {
  // Debian's libamdhip64-5, as tools/setup.sh installs it: it loads, and
  // hipInit finds no GPU.
  void *library = nullptr;
  for (const char *name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
    if (!library)
      library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  INFO("no HIP runtime: install libamdhip64-5 (tools/setup.sh)");
  REQUIRE(library);
  REQUIRE(!dlsym(library, "kiln_fake_hip_set"));
  kiln_model_t *model = load("hip.kiln");
  kiln_session_t *session;
  std::string message;
  CHECK(open(model, "hip:0", &session, &message) == KILN_STATUS_UNAVAILABLE);
  CHECK(message.rfind("device 'hip:0' is not available: this machine has no AMD GPU (libamdhip64",
                      0) == 0);
  CHECK(session == nullptr);
  // The host device is unaffected.
  REQUIRE(open(model, "host", &session) == KILN_STATUS_OK);
  std::vector<float> input(kInputBytes / 4, 1.0f);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  CHECK(codeOf(kiln_session_run(session, &in, 1, nullptr, 0)) == KILN_STATUS_OK);
  kiln_session_destroy(session);
  kiln_model_release(model);
}
