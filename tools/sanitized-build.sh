#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Configures (once) and builds a sanitized tree with clang 22:
#
#   tools/sanitized-build.sh asan|tsan|asan-compiler [TARGET...]
#
# build-asan/: the runtime, its tests and the runtime's fuzzers, with ASan,
# UBSan and libFuzzer's instrumentation; build-tsan/: the runtime and its
# tests with TSan. Both hold the runtime alone (-DKILN_RUNTIME_ONLY=ON).
# build-asan-compiler/: everything, with ASan, UBSan and libFuzzer's
# instrumentation: the importer's fuzzer, or (all targets, about an hour on
# two cores) a kiln whose lit tests run sanitized (tools/sanitize.sh
# --compiler).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: tools/sanitized-build.sh asan|tsan|asan-compiler [TARGET...]}
shift
asan=(-DKILN_SANITIZE=address,undefined -DKILN_FUZZ=ON)
case $kind in
  asan) flags=(-DKILN_RUNTIME_ONLY=ON -DKILN_RUNTIME_TESTS=ON "${asan[@]}"
          -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm) ;;
  tsan) flags=(-DKILN_RUNTIME_ONLY=ON -DKILN_RUNTIME_TESTS=ON -DKILN_SANITIZE=thread) ;;
  asan-compiler) flags=("${asan[@]}" -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir) ;;
  *) echo "tools/sanitized-build.sh: asan, tsan or asan-compiler, not '$kind'" >&2; exit 2 ;;
esac
build=build-$kind
if [[ ! -f $build/build.ninja ]]; then
  # -O2 without -g: the sanitizer flags add line tables, all a report needs.
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
    -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
    "${flags[@]}" > /dev/null
fi
mkdir -p "$build/logs"
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build" "${targets[@]}" > "$build/logs/build.log" ||
  { tail -40 "$build/logs/build.log"; exit 1; }
