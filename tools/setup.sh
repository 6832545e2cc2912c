#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs what kiln's build and tests need on Debian 12 (bookworm): LLVM and
# MLIR 22, lld, clang 22 with its sanitizer and libFuzzer runtimes, AMD's
# device libraries and HIP runtime (for the no-GPU test of the HIP device),
# protobuf, ONNX and FlatBuffers headers, OpenSSL's
# libcrypto and its command line, Catch2, CMake and Ninja from Debian's
# packages, and onnx and numpy from PyPI (test models, onnxruntime for
# reference outputs). Then build/venv, a virtual environment of Debian's
# own Python for the Python package (python/): its build tools, its tests'
# packages, and PyTriton for serving. Safe to run again: it installs only
# what is missing. The CUDA toolkit (ptxas, libdevice) comes with the
# machine.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3 python3-venv python3-dev pkg-config
  llvm-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22
  clang-22 libclang-rt-22-dev
  rocm-device-libs libamdhip64-5
  libonnx-dev libprotobuf-dev protobuf-compiler
  libflatbuffers-dev flatbuffers-compiler libssl-dev openssl
  catch2 libonnx-testdata
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  echo "kiln setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

python_packages=(onnx numpy onnxruntime)
if ! python3 -c "import onnx, numpy, onnxruntime" 2>/dev/null; then
  echo "kiln setup: installing ${python_packages[*]} from PyPI"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
  fi
  # Debian's own Python refuses pip installs without this flag (PEP 668).
  python3 -m pip install --quiet "${python_packages[@]}" 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages "${python_packages[@]}"
fi

# The Python package's environment. Debian's /usr/bin/python3, not whatever
# python3 is first on PATH: PyTriton's Triton server runs its Python backend
# stub with this interpreter, and another one's threading internals break it
# (docs/serving.md).
venv=build/venv
if ! "$venv/bin/python" -c "import nanobind, scikit_build_core, pytest, onnx, onnxruntime, ml_dtypes" 2>/dev/null; then
  echo "kiln setup: making $venv (the Python package's build and tests)"
  mkdir -p build
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet nanobind scikit-build-core numpy ml_dtypes pytest \
    onnx onnxruntime
fi
if ! "$venv/bin/python" -c "import pytriton, tritonclient.http, tritonclient.grpc" 2>/dev/null; then
  echo "kiln setup: installing PyTriton and tritonclient into $venv (serving)"
  "$venv/bin/python" -m pip install --quiet nvidia-pytriton "tritonclient[all]" ||
    echo "kiln setup: PyTriton could not be installed here: the serving tests will be skipped"
fi
