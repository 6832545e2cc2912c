#!/usr/bin/env bash
# Configures (once) and builds a sanitized tree of the runtime, its tests and
# the fuzzers with clang 22:
#
#   tools/sanitized-build.sh asan|tsan [TARGET...]
#
# build-asan/: ASan and UBSan, with libFuzzer's instrumentation;
# build-tsan/: TSan. Both hold the runtime alone (-DKILN_RUNTIME_ONLY=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: tools/sanitized-build.sh asan|tsan [TARGET...]}
shift
case $kind in
  asan) flags=(-DKILN_SANITIZE=address,undefined -DKILN_FUZZ=ON
          -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm) ;;
  tsan) flags=(-DKILN_SANITIZE=thread) ;;
  *) echo "tools/sanitized-build.sh: asan or tsan, not '$kind'" >&2; exit 2 ;;
esac
build=build-$kind
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
    -DKILN_RUNTIME_ONLY=ON -DKILN_RUNTIME_TESTS=ON \
    "${flags[@]}" > /dev/null
fi
mkdir -p "$build/logs"
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build" "${targets[@]}" > "$build/logs/build.log" ||
  { tail -40 "$build/logs/build.log"; exit 1; }
