#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Configures (once) and builds kiln into build/ with CMake and Ninja, then
# installs the Python package into build/venv when tools/setup.sh made it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build/build.ninja ]]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
cmake --build build
if [[ -x build/venv/bin/python ]]; then
  tools/python-package.sh
fi
