#!/usr/bin/env bash
# Sets up a fresh machine, builds kiln and runs every test (lit and unit).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
cd build
ctest --output-on-failure
