#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the Python package (python/) and installs it into build/venv, which
# tools/setup.sh makes: offline, with the build tools already there, and
# incrementally (its CMake build stays in build/python-package).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x build/venv/bin/python ]]; then
  echo "python-package: build/venv is missing: run tools/setup.sh first" >&2
  exit 1
fi
build/venv/bin/python -m pip install --quiet --no-build-isolation --no-deps \
  -C build-dir="$PWD/build/python-package" ./python
