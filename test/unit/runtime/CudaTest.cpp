// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime's CUDA device, against the fake driver in FakeCuda.cpp (found
// as libcuda.so.1 through LD_LIBRARY_PATH): choosing code for the GPU,
// uploading weights once, one allocation per session, launch parameters
// that point into device memory, CUDA graphs, asynchronous runs, and the
// errors a GPU can give.
//
// CTest compiles conv_relu for host,sm_80,sm_90,sm_90a (with cubins) and for
// sm_80,sm_90 as PTX only, a batched MatMul for sm_90a as PTX (tma.kiln),
// and symbolic.onnx's batch and sequence for sm_90 as PTX (symbolic.kiln),
// into $KILN_TEST_ARTIFACTS.

#include "ArtifactBytes.h"
#include "GpuTest.h"

#include <cstring>

namespace {

/// The fake CUDA driver (FakeCuda.cpp): one sm_90 GPU.
struct Fake : FakeDriver {
  Fake() : FakeDriver("libcuda.so.1", "kiln_fake_cuda") {}
};

} // namespace

TEST_CASE("the fake driver defines every entry point the runtime resolves", "[cuda]") {
  const char *const names[] = {
#define KILN_CUDA_SYMBOL(member, symbol, result, parameters) #symbol,
#include "runtime/src/cuda/DynamicSymbolTables.h"
  };
  checkDefinesEntryPoints("libcuda.so.1", "kiln_fake_cuda_get", names);
}

TEST_CASE("a session runs the cubin for its GPU, as one CUDA graph", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("cuda.kiln");
  kiln_session_t *session;
  REQUIRE(open(model, "cuda:0", &session) == KILN_STATUS_OK);
  CHECK(std::string(kiln_session_device(session)) == "cuda:0 (Fake GPU, sm_90, cubin for sm_90a)");
  CHECK(fake.get("cubins loaded") == 1);
  CHECK(fake.get("graphs") == 1);
  // The weights, then nothing more until a run.
  CHECK(fake.get("uploads") == 1);
  CHECK(fake.get("allocations") == 2);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  CHECK(fake.get("graph launches") == 2);
  CHECK(fake.get("kernels run") == 2 * fake.get("launches"));
  kiln_session_destroy(session);
  kiln_model_release(model);
  // Everything the session and the model had is given back.
  CHECK(fake.get("allocations") == 0);
  CHECK(fake.get("modules") == 0);
  CHECK(fake.get("contexts") == 0);
}

TEST_CASE("the weights are uploaded once per model and GPU", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("cuda.kiln");
  kiln_session_t *first, *second;
  REQUIRE(open(model, "cuda:0", &first) == KILN_STATUS_OK);
  REQUIRE(open(model, "cuda", &second) == KILN_STATUS_OK);
  CHECK(fake.get("uploads") == 1);
  CHECK(fake.get("modules") == 1);
  // One allocation for the weights, one per session.
  CHECK(fake.get("allocations") == 3);
  CHECK(runOnce(first) == KILN_STATUS_OK);
  CHECK(runOnce(second) == KILN_STATUS_OK);
  kiln_session_destroy(first);
  kiln_session_destroy(second);
  CHECK(fake.get("allocations") == 1);
  kiln_model_release(model);
  CHECK(fake.get("allocations") == 0);
}

TEST_CASE("code is chosen for the GPU's architecture", "[cuda]") {
  Fake fake;
  // What a session on a GPU of compute capability `cc` runs, or why not.
  auto runs = [&](long cc) {
    fake.set("cc", cc);
    kiln_model_t *model = load("cuda.kiln");
    kiln_session_t *session;
    std::string message;
    if (open(model, "cuda:0", &session, &message) == KILN_STATUS_OK)
      message = kiln_session_device(session);
    kiln_session_destroy(session);
    kiln_model_release(model);
    return message;
  };
  // sm_90 runs sm_90a's code (wgmma) before sm_90's.
  CHECK(runs(90) == "cuda:0 (Fake GPU, sm_90, cubin for sm_90a)");
  // sm_89 runs sm_80's: neither sm_90 nor sm_90a is for it.
  CHECK(runs(89) == "cuda:0 (Fake GPU, sm_89, cubin for sm_80)");
  // sm_86 runs sm_80's cubin unchanged.
  CHECK(runs(86) == "cuda:0 (Fake GPU, sm_86, cubin for sm_80)");
  // A newer major version compiles the newest PTX it can run: sm_90a's
  // is for sm_90 alone.
  CHECK(runs(100) == "cuda:0 (Fake GPU, sm_100, PTX for sm_90)");
  // An older GPU has nothing it can run.
  CHECK(runs(75) ==
        "cuda:0 (Fake GPU) is sm_75, and the artifact has no code it can run (it "
        "holds code for x86-64-v4, x86-64-v3, sm_80, sm_90, sm_90a); compile with --target sm_75");
}

TEST_CASE("every launch passes pointers into device memory", "[cuda]") {
  // PTX names its pointer parameters, so the fake checks each of them. The
  // conv_relu plan for GPUs is 2 kernels: the tensor-core convolution
  // (which reads the NCHW input through its transpose) and the transpose
  // back.
  Fake fake;
  kiln_model_t *model = load("cuda_ptx.kiln");
  // Callers of API version 4 still build with the flag's old name.
  static_assert(KILN_SESSION_NO_CUDA_GRAPH == KILN_SESSION_NO_GRAPH);
  for (uint32_t flags : {0u, unsigned(KILN_SESSION_NO_GRAPH)}) {
    fake.set("reset", 1);
    kiln_session_t *session;
    REQUIRE(open(model, "cuda:0", &session, nullptr, flags) == KILN_STATUS_OK);
    CHECK(std::string(kiln_session_device(session)) == "cuda:0 (Fake GPU, sm_90, PTX for sm_90)");
    CHECK(runOnce(session) == KILN_STATUS_OK);
    CHECK(fake.get("kernels run") == 2);
    CHECK(fake.get("bad pointers") == 0);
    // The fake's events tell kernels run, as milliseconds.
    CHECK(kiln_session_kernel_milliseconds(session) == 2.0);
    CHECK(fake.get("graphs") == (flags ? 0 : 1));
    kiln_session_destroy(session);
  }
  kiln_model_release(model);
}

TEST_CASE("a symbolic plan launches on the grids each run's sizes give", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("symbolic.kiln");
  checkSymbolicRuns(model, "cuda:0", fake);
  kiln_model_release(model);
}

TEST_CASE("a profiled session times each kernel", "[cuda]") {
  // Profiling launches kernel by kernel with an event before each: no
  // graph, and each of conv_relu's 2 kernels takes "1 ms" (the fake's
  // events count the kernels run).
  Fake fake;
  kiln_model_t *model = load("cuda.kiln");
  kiln_session_t *session;
  REQUIRE(open(model, "cuda:0", &session, nullptr, KILN_SESSION_PROFILE) == KILN_STATUS_OK);
  CHECK(std::string(kiln_session_target(session)) == "sm_90a");
  CHECK(fake.get("graphs") == 0);
  // Nothing before the first run.
  CHECK(kiln_session_kernel_profile(session, nullptr, 0) == 0);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  std::vector<double> profile(3, -1.0);
  REQUIRE(kiln_session_kernel_profile(session, profile.data(), profile.size()) == 2);
  CHECK(profile == std::vector<double>{1.0, 1.0, -1.0});
  CHECK(kiln_session_kernel_milliseconds(session) == 2.0);
  // A shorter array takes the first kernels' times.
  std::vector<double> first(1, -1.0);
  CHECK(kiln_session_kernel_profile(session, first.data(), 1) == 2);
  CHECK(first[0] == 1.0);
  kiln_session_destroy(session);

  // Without the flag there is no profile.
  REQUIRE(open(model, "cuda:0", &session) == KILN_STATUS_OK);
  CHECK(runOnce(session) == KILN_STATUS_OK);
  CHECK(kiln_session_kernel_profile(session, profile.data(), profile.size()) == 0);
  kiln_session_destroy(session);
  kiln_model_release(model);
}

TEST_CASE("an asynchronous run finishes at the wait", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("cuda.kiln");
  checkAsyncRun(model, "cuda:0", fake);
  kiln_model_release(model);
}

TEST_CASE("running out of GPU memory is RESOURCE_EXHAUSTED", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("cuda.kiln");
  kiln_session_t *session;
  std::string message;
  // Room for the weights but not the session.
  fake.set("memory", 4096);
  CHECK(open(model, "cuda:0", &session, &message) == KILN_STATUS_RESOURCE_EXHAUSTED);
  CHECK(message.find("cuda:0: cannot allocate the session's ") == 0);
  CHECK(message.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos);
  CHECK(session == nullptr);
  fake.set("memory", 1L << 40);
  REQUIRE(open(model, "cuda:0", &session) == KILN_STATUS_OK);
  kiln_session_destroy(session);
  kiln_model_release(model);
}

TEST_CASE("TMA kernels read tensor maps encoded once per session", "[cuda]") {
  Fake fake;
  // A batched MatMul on sm_90a, whose product copies A with TMA.
  kiln_model_t *model = load("tma.kiln");
  kiln_session_t *session;
  REQUIRE(open(model, "cuda:0", &session) == KILN_STATUS_OK);
  CHECK(fake.get("tensor maps") == 1);
  const int64_t xShape[] = {4, 100, 512}, yShape[] = {4, 512, 256};
  std::vector<float> x(4 * 100 * 512), y(4 * 512 * 256);
  kiln_tensor_t inputs[] = {{"x", KILN_DTYPE_F32, 3, xShape, x.data(), x.size() * 4},
                            {"y", KILN_DTYPE_F32, 3, yShape, y.data(), y.size() * 4}};
  for (int run = 1; run <= 2; ++run) {
    CHECK(codeOf(kiln_session_run(session, inputs, 2, nullptr, 0)) == KILN_STATUS_OK);
    // The product's launch passes the map's address in device memory.
    CHECK(fake.get("tensor maps read") == run);
  }
  CHECK(fake.get("bad pointers") == 0);
  CHECK(fake.get("tensor maps") == 1);
  kiln_session_destroy(session);

  // A map the driver refuses fails the session, naming the kernel.
  fake.set("fail tensor maps", 1);
  std::string message;
  CHECK(open(model, "cuda:0", &session, &message) == KILN_STATUS_INTERNAL);
  CHECK(message.rfind("cuda:0: cannot encode a tensor map for kernel ", 0) == 0);
  CHECK(message.find("CUDA_ERROR_INVALID_VALUE") != std::string::npos);
  kiln_model_release(model);
  CHECK(fake.get("allocations") == 0);
}

TEST_CASE("a tensor map reaching past its buffer's memory is refused", "[cuda][verify]") {
  // tma.kiln maps A as [512, 100, 4] (reduction, rows, batch): all of the
  // arena. Make it 101 rows and re-seal the file.
  std::string bytes = readBytes(artifact("tma.kiln"));
  const uint64_t dims[] = {512, 100, 4};
  size_t at = bytes.find(std::string(reinterpret_cast<const char *>(dims), sizeof(dims)));
  REQUIRE(at != std::string::npos);
  bytes[at + 8] = 101;
  reseal(bytes);
  kiln_model_t *model = nullptr;
  std::string message;
  CHECK(codeOf(kiln_model_load_memory(bytes.data(), bytes.size(), nullptr, &model), &message) ==
        KILN_STATUS_DATA_LOSS);
  CHECK(message.find("has a tensor map outside its buffer's memory") != std::string::npos);
}

TEST_CASE("a launch its code was not compiled for is refused", "[cuda][verify]") {
  // The first launch of the plan the fake sm_90 GPU runs gets one more
  // block in x; the code (a cubin, or PTX) records the grid it was compiled
  // for.
  for (auto [name, target] :
       {std::pair<const char *, std::string>{"cuda.kiln", "sm_90a"}, {"cuda_ptx.kiln", "sm_90"}}) {
    Fake fake;
    std::string bytes = readBytes(artifact(name));
    uint32_t blocks = addBlock(bytes, target);
    kiln_model_t *model = nullptr;
    REQUIRE(codeOf(kiln_model_load_memory(bytes.data(), bytes.size(), nullptr, &model)) ==
            KILN_STATUS_OK);
    kiln_session_t *session = nullptr;
    std::string message;
    CHECK(open(model, "cuda:0", &session, &message) == KILN_STATUS_DATA_LOSS);
    CHECK(message.rfind("corrupt artifact: the " + target +
                            " code does not match the manifest: the manifest says `launch 0 ",
                        0) == 0);
    CHECK(message.find("grid " + std::to_string(blocks) + "x") != std::string::npos);
    kiln_model_release(model);
    CHECK(fake.get("allocations") == 0);
  }
}

TEST_CASE("a failed kernel fails the run and the session", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("cuda.kiln");
  kiln_session_t *session;
  REQUIRE(open(model, "cuda:0", &session) == KILN_STATUS_OK);
  fake.set("fail kernels", 719);
  std::string message;
  CHECK(runOnce(session, &message) == KILN_STATUS_INTERNAL);
  CHECK(message == "cuda:0: a kernel failed: CUDA_ERROR_LAUNCH_FAILED: an error the fake driver "
                   "made; the GPU context cannot recover, so this session cannot run again");
  CHECK(runOnce(session, &message) == KILN_STATUS_INTERNAL);
  CHECK(message.find("this session cannot run again") != std::string::npos);
  kiln_session_destroy(session);
  kiln_model_release(model);
}

TEST_CASE("GPUs that are not there are named", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("cuda.kiln");
  kiln_session_t *session;
  std::string message;
  CHECK(open(model, "cuda:3", &session, &message) == KILN_STATUS_UNAVAILABLE);
  CHECK(message == "device 'cuda:3' is not available: this machine has 1 CUDA GPU");
  fake.set("devices", 0);
  CHECK(open(model, "cuda:0", &session, &message) == KILN_STATUS_UNAVAILABLE);
  CHECK(message == "device 'cuda:0' is not available: this machine has 0 CUDA GPUs");
  // The host device is unaffected.
  REQUIRE(open(model, "host", &session) == KILN_STATUS_OK);
  CHECK(std::string(kiln_session_device(session)).rfind("host (x86-64-v", 0) == 0);
  std::vector<float> input(kInputBytes / 4, 1.0f);
  kiln_tensor_t in = {"input", KILN_DTYPE_F32, 4, kInputShape, input.data(), kInputBytes};
  CHECK(codeOf(kiln_session_run(session, &in, 1, nullptr, 0)) == KILN_STATUS_OK);
  kiln_session_destroy(session);
  kiln_model_release(model);
}

TEST_CASE("a GPU-only artifact has no host code", "[cuda]") {
  Fake fake;
  kiln_model_t *model = load("cuda_ptx.kiln");
  kiln_session_t *session;
  std::string message;
  CHECK(open(model, "host", &session, &message) == KILN_STATUS_UNAVAILABLE);
  CHECK(message == "the artifact has no code for the host CPU (it holds code for sm_80, sm_90); "
                   "compile with --target host");
  kiln_model_release(model);
}
