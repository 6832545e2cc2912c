#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes the seed corpus of one fuzzer from the test inputs.

    seeds.py TARGET OUT --build BUILD

artifact, sealed-artifact: the artifacts the runtime's tests load (BUILD's
test/unit/conv_relu.kiln and test/unit/cuda/*.kiln; conv_relu is compiled
with BUILD/bin/kiln when the tests have not run). npy: arrays of every dtype
kiln reads, in each header version. calibration: calibration files as kiln
calibrate writes them, and the lit tests' broken ones. onnx: the ONNX
backend tests' node models (Debian's libonnx-testdata) and the test models'
small ones.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def artifacts(out, build):
    unit = os.path.join(build, "test", "unit")
    found = glob.glob(os.path.join(unit, "conv_relu.kiln")) + \
        glob.glob(os.path.join(unit, "cuda", "*.kiln"))
    if not found:
        kiln = os.path.join(build, "bin", "kiln")
        if not os.path.exists(kiln):
            sys.exit(f"seeds.py: no artifacts in {unit} and no {kiln}: build kiln first")
        subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                        "--out", out, "--models", "conv_relu"], check=True,
                       stdout=subprocess.DEVNULL)
        model = os.path.join(out, "conv_relu.onnx")
        subprocess.run([kiln, "compile", model, "-o", os.path.join(out, "conv_relu.kiln")],
                       check=True)
        os.remove(model)
        return
    for path in found:
        shutil.copy(path, os.path.join(out, os.path.basename(path)))


def npy(out):
    import numpy as np
    arrays = {
        "f32": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
        "f16": np.ones((2, 2), np.float16),
        "f64": np.arange(3, dtype=np.float64),
        "i8": np.arange(-4, 4, dtype=np.int8),
        "i64": np.array([[1, 2], [3, 4]], np.int64),
        "u16": np.arange(5, dtype=np.uint16),
        "bool": np.array([True, False, True]),
        "scalar": np.float32(2.5),
        "empty": np.zeros((0, 3), np.float32),
    }
    for name, array in arrays.items():
        np.save(os.path.join(out, name + ".npy"), array)
    # Header versions 2.0 and 3.0 (4-byte header lengths).
    for version in ((2, 0), (3, 0)):
        with open(os.path.join(out, "v%d.npy" % version[0]), "wb") as f:
            np.lib.format.write_array(f, arrays["f32"], version=version)


def shapes(out):
    """Runs of test/unit/runtime/inputs/symbolic.onnxtxt (x[batch, 4],
    z[batch, seq]; three outputs), as ShapesFuzzer.cpp reads them: per
    input a rank, a byte per dimension, a byte-size skew; per output how it
    is asked for (0 not, 1 into the session's buffer, 2 a buffer of its own,
    with a rank, dimensions and skew)."""
    seeds = {
        "good": [2, 3, 4, 0, 2, 3, 5, 0, 1, 1, 1],
        "batch-4": [2, 4, 4, 0, 2, 4, 8, 0, 1, 2, 2, 8, 4, 0, 2, 1, 4, 0],
        "out-of-range": [2, 5, 4, 0, 2, 5, 2, 0, 1, 1, 1],
        "disagree": [2, 2, 4, 0, 2, 3, 2, 0, 1, 1, 1],
        "short": [2, 2, 4, 2, 2, 2, 2, 0, 1, 1, 1],
        "huge": [2, 255, 127, 255, 255, 255, 255, 255, 255, 255, 4, 0, 2, 1, 1, 0, 1, 1, 1],
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes(data))


def calibration(out):
    files = {
        "written.json": {"tensors": {"input": 1.5, "/conv/Conv_output_0": 12.25, "a": 0}},
        "empty.json": {"tensors": {}},
        "nested.json": {"tensors": {"x": 1e38}, "samples": 3, "model": "m.onnx"},
    }
    for name, value in files.items():
        with open(os.path.join(out, name), "w") as f:
            json.dump(value, f)
    for name, text in (("broken.json", '{"tensors": {"a": '), ("negative.json",
                       '{"tensors": {"a": -1}}'), ("not-object.json", '[1, 2, 3]')):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)


def onnx_models(out):
    node = "/usr/share/libonnx-testdata/data/node"
    for path in sorted(glob.glob(os.path.join(node, "*", "model.onnx"))):
        shutil.copy(path, os.path.join(out, os.path.basename(os.path.dirname(path)) + ".onnx"))
    subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                    "--out", out, "--models", "conv_relu"], check=True, stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=["artifact", "sealed-artifact", "shapes", "npy",
                                           "calibration", "onnx"])
    parser.add_argument("out")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.target in ("artifact", "sealed-artifact"):
        artifacts(args.out, args.build)
    elif args.target == "shapes":
        shapes(args.out)
    elif args.target == "npy":
        npy(args.out)
    elif args.target == "onnx":
        onnx_models(args.out)
    else:
        calibration(args.out)


if __name__ == "__main__":
    main()
