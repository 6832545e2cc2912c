#!/usr/bin/env bash
# The sanitizer checks, which CI runs after the tests (tools/check.sh):
#
# - ASan and UBSan (build-asan/): the runtime's tests and the CUDA device's
#   (against the fake driver) on the artifacts the tests in build/ made;
#   each fuzzer's regression corpus; then FUZZ_SECONDS (default 45) of
#   fuzzing each harness (tools/fuzz.sh).
# - TSan (build-tsan/): the runtime's tests, among them 8 threads running
#   one shared model 200 times each, bit for bit as one thread does.
#
# The compiler itself is not built sanitized here (a second full build does
# not fit CI's time); the runtime and every reader of untrusted input
# outside the importer are.
set -euo pipefail
cd "$(dirname "$0")/.."
unit=$PWD/build/test/unit
if [[ ! -f $unit/conv_relu.kiln || ! -f $unit/cuda/cuda.kiln ]]; then
  echo "tools/sanitize.sh: run the tests in build/ first: they make the artifacts" >&2
  exit 1
fi
export KILN_TEST_ARTIFACT=$unit/conv_relu.kiln KILN_TEST_ARTIFACTS=$unit/cuda

echo "sanitize: building the runtime, its tests and the fuzzers with ASan and UBSan"
tools/sanitized-build.sh asan
build-asan/bin/kiln-runtime-tests
LD_LIBRARY_PATH=$PWD/build-asan/test/unit/runtime/fake-cuda build-asan/bin/kiln-cuda-tests
for target in artifact sealed-artifact npy calibration; do
  tools/fuzz.sh "$target" "${FUZZ_SECONDS:-45}"
done

echo "sanitize: building the runtime and its tests with TSan"
tools/sanitized-build.sh tsan kiln-runtime-tests
TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/kiln-runtime-tests
