#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sets up a fresh machine, builds kiln, then compiles the bundled example (a
# 3x3 convolution with bias followed by ReLU) and shows what was produced:
# the imported kiln IR, a host artifact that it runs and checks against
# onnxruntime, PTX checked by ptxas, and an AMD gfx942 code object.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh

out=build/example
mkdir -p "$out"
python3 test/models/generate.py --out "$out" --models conv_relu
kiln=build/bin/kiln

echo; echo "== kiln compile conv_relu.onnx --emit kiln"
"$kiln" compile "$out/conv_relu.onnx" --emit kiln

echo "== kiln compile conv_relu.onnx -o $out/conv_relu.kiln"
"$kiln" compile "$out/conv_relu.onnx" -o "$out/conv_relu.kiln"
ls -l "$out/conv_relu.kiln"
echo; echo "== kiln run conv_relu.kiln --input input=... --output-dir $out/outputs"
flags=$(python3 test/lit/runtime/inputs/reference.py inputs "$out/conv_relu.onnx" "$out/inputs")
"$kiln" run "$out/conv_relu.kiln" $flags --output-dir "$out/outputs"
echo "compared with onnxruntime on the same input:"
python3 test/lit/runtime/inputs/reference.py compare "$out/conv_relu.onnx" "$out/inputs" "$out/outputs"

echo; echo "== kiln compile conv_relu.onnx --target sm_90 --emit ptx -o $out/conv_relu.ptx"
"$kiln" compile "$out/conv_relu.onnx" --target sm_90 --emit ptx -o "$out/conv_relu.ptx"
grep -E "^\.(version|target)|\.entry" "$out/conv_relu.ptx"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [[ -x $ptxas ]]; then
  "$ptxas" -arch=sm_90 "$out/conv_relu.ptx" -o "$out/conv_relu.cubin"
  echo "ptxas accepts it for sm_90: $(stat -c %s "$out/conv_relu.cubin") bytes of cubin"
else
  echo "(ptxas not found: install the CUDA toolkit to check the PTX)"
fi

echo; echo "== kiln compile conv_relu.onnx --target gfx942 --emit hsaco -o $out/conv_relu.hsaco"
"$kiln" compile "$out/conv_relu.onnx" --target gfx942 --emit hsaco -o "$out/conv_relu.hsaco"
/usr/lib/llvm-22/bin/llvm-readelf --file-header "$out/conv_relu.hsaco" | grep -E "Class|OS/ABI|Type|Machine|Flags"
echo; echo "Everything is in $out/."
