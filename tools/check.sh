#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sets up a fresh machine, builds kiln and runs every test (lit, unit,
# conformance), then the sanitizer checks and bounded fuzzing
# (tools/sanitize.sh, 30 s per fuzzer here; FUZZ_SECONDS overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
(cd build && ctest --output-on-failure -j2)
FUZZ_SECONDS=${FUZZ_SECONDS:-30} tools/sanitize.sh
