#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks kiln's rounding to TF32, FP16, BF16, FP8 E4M3FN and E4M3FNUZ against
NumPy and ml_dtypes.

    precision.py model DIR    writes DIR/outer.onnx, DIR/a.npy,
                              DIR/scales.json (a's absolute maximum: 448, so
                              that its FP8 scale is 1) and
                              DIR/scales-fnuz.json (240: scale 1 in FNUZ)
    precision.py check DIR FORMAT OUTPUT.npy

outer.onnx is y = MatMul(a, w), a an input of shape [N, 1], w a constant of
shape [1, M] whose largest magnitude is 448 (FP8 scale 1 too; 448 / 240 in
FNUZ): each y[i, j] is the one product round(a[i]) * round(w[j]), so the
output must equal the reference bit for bit. a and w hold ties, subnormals
of FP16 and FP8, values past FP16's and FP8's ranges, a negative zero and
(in a) a NaN.
"""
import json
import os
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

A = np.array([1.0, 0.1, -3.14159, 1e-5, 6e-8, 7e4, 1.00390625, 1.01171875,
              0.001953125, 0.0029296875, 500.0, -0.0, 65519.0, np.nan],
             np.float32).reshape(-1, 1)
W = np.array([1.0, 0.3, -448.0, 2.5, 1e-3, 3.0e-6, 1.0 + 2**-11, 0.0048828125],
             np.float32).reshape(1, -1)


def tf32(x):
    bits = x.view(np.uint32).astype(np.uint64)
    lsb = (bits >> 13) & 1
    rounded = ((bits + 0xFFF + lsb) & ~np.uint64(0x1FFF)).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, rounded)


def e4m3(dtype, largest):
    """Rounding to an E4M3 format at a per-tensor scale mapping the absolute
    maximum to `largest`; the formats saturate in kiln (as cuBLAS's and
    AMD's FP8 conversions do)."""
    def rounded(x, absmax):
        scale = np.float32(absmax) / np.float32(largest)
        unscaled = np.clip(x / scale, -largest, largest).astype(dtype).astype(np.float32)
        return unscaled * scale
    return rounded


ROUND = {
    "tf32": lambda x, absmax: tf32(x),
    "fp16": lambda x, absmax: x.astype(np.float16).astype(np.float32),
    "bf16": lambda x, absmax: x.astype(ml_dtypes.bfloat16).astype(np.float32),
    "fp8": e4m3(ml_dtypes.float8_e4m3fn, 448),
    "fp8-fnuz": e4m3(ml_dtypes.float8_e4m3fnuz, 240),
}
# The activation's calibrated absolute maximum: scale 1 in each format.
CALIBRATED = {"fp8": 448.0, "fp8-fnuz": 240.0}


def model(out):
    os.makedirs(out, exist_ok=True)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "w"], ["y"], name="/outer/MatMul")], "outer",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(A.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [A.shape[0], W.shape[1]])],
        [numpy_helper.from_array(W, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(out, "outer.onnx"))
    np.save(os.path.join(out, "a.npy"), A)
    for name, fmt in (("scales.json", "fp8"), ("scales-fnuz.json", "fp8-fnuz")):
        with open(os.path.join(out, name), "w") as f:
            json.dump({"tensors": {"a": CALIBRATED[fmt]}}, f)


def check(out, fmt, output):
    with np.errstate(invalid="ignore", over="ignore"):
        expected = (ROUND[fmt](A, CALIBRATED.get(fmt, 1.0))
                    * ROUND[fmt](W, np.abs(W).max()))
    actual = np.load(output)
    same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
    if not same.all():
        for i, j in zip(*np.nonzero(~same)):
            print(f"{fmt}: y[{i}, {j}] = round({A[i, 0]!r}) * round({W[0, j]!r}) is "
                  f"{actual[i, j]!r}, expected {expected[i, j]!r}")
        sys.exit(1)
    print(f"{fmt}: {actual.size} products exact")


if __name__ == "__main__":
    if sys.argv[1] == "model":
        model(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4])
