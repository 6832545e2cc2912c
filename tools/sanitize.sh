#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The sanitizer checks, which CI runs after the tests (tools/check.sh):
#
# - ASan and UBSan (build-asan/): the runtime's tests and the CUDA device's
#   (against the fake driver) on the artifacts the tests in build/ made;
#   each fuzzer's regression corpus; then FUZZ_SECONDS (default 45) of
#   fuzzing each harness (tools/fuzz.sh), the ONNX importer's among them
#   (built in build-asan-compiler/).
# - TSan (build-tsan/): the runtime's tests, among them 8 threads running
#   one shared model 200 times each, bit for bit as one thread does.
#
#   tools/sanitize.sh --compiler
#
# builds all of kiln with ASan and UBSan in build-asan-compiler/ (about an
# hour on two cores, which CI's time does not afford) and runs the lit
# tests, the models' among them, with that kiln and runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --compiler ]]; then
  echo "sanitize: building kiln with ASan and UBSan"
  tools/sanitized-build.sh asan-compiler
  # The compiler's one-time allocations live until exit, by design.
  ASAN_OPTIONS=detect_leaks=0 /usr/lib/llvm-22/bin/lit -sv build-asan-compiler/test
  exit
fi
unit=$PWD/build/test/unit
if [[ ! -f $unit/conv_relu.kiln || ! -f $unit/symbolic.kiln || ! -f $unit/cuda/cuda.kiln ||
      ! -f $unit/hip/hip.kiln ]]; then
  echo "tools/sanitize.sh: run the tests in build/ first: they make the artifacts" >&2
  exit 1
fi
export KILN_TEST_ARTIFACT=$unit/conv_relu.kiln
export KILN_TEST_SYMBOLIC_ARTIFACT=$unit/symbolic.kiln

echo "sanitize: building the runtime, its tests and the fuzzers with ASan and UBSan"
tools/sanitized-build.sh asan
build-asan/bin/kiln-runtime-tests
KILN_TEST_ARTIFACTS=$unit/cuda LD_LIBRARY_PATH=$PWD/build-asan/test/unit/runtime/fake-cuda \
  build-asan/bin/kiln-cuda-tests
KILN_TEST_ARTIFACTS=$unit/hip LD_LIBRARY_PATH=$PWD/build-asan/test/unit/runtime/fake-hip \
  build-asan/bin/kiln-hip-tests "~[real]"
KILN_TEST_ARTIFACTS=$unit/hip build-asan/bin/kiln-hip-tests "[real]"
for target in artifact sealed-artifact shapes npy calibration onnx; do
  tools/fuzz.sh "$target" "${FUZZ_SECONDS:-45}"
done

echo "sanitize: building the runtime and its tests with TSan"
tools/sanitized-build.sh tsan kiln-runtime-tests
TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/kiln-runtime-tests
