#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Makes inputs for a model and checks kiln's outputs against onnxruntime's.

    reference.py inputs MODEL.onnx DIR [--shape NAME=D0xD1...] [--seed N] [--vocab N]
        writes DIR/NAME.npy for every graph input (int64 ids in [0, N=1000),
        token type ids in [0, 2), an attention mask of ones with a zero
        tail, floats from N(0, 1))
        and prints "--input NAME=DIR/NAME.npy ..." for kiln run.
    reference.py compare MODEL.onnx INPUT_DIR OUTPUT_DIR [--rtol R] [--atol A]
        runs onnxruntime on the same inputs and compares every output.
"""
import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64,
         onnx.TensorProto.INT32: np.int32, onnx.TensorProto.BOOL: np.bool_}


def graph_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in initializers]


def make_inputs(args):
    model = onnx.load(args.model, load_external_data=False)
    shapes = dict(s.split("=") for s in args.shape)
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.dir, exist_ok=True)
    flags = []
    for value in graph_inputs(model):
        tensor = value.type.tensor_type
        if value.name in shapes:
            dims = [int(d) for d in shapes[value.name].split("x")]
        else:
            dims = [d.dim_value for d in tensor.shape.dim]
        dtype = NUMPY[tensor.elem_type]
        if value.name == "attention_mask":
            data = np.ones(dims, dtype)
            data[..., dims[-1] * 3 // 4:] = 0
        elif value.name == "token_type_ids":
            data = rng.integers(0, 2, dims, dtype=dtype)
        elif np.issubdtype(dtype, np.integer):
            data = rng.integers(0, args.vocab, dims, dtype=dtype)
        else:
            data = rng.standard_normal(dims).astype(dtype)
        path = os.path.join(args.dir, value.name + ".npy")
        np.save(path, data)
        flags.append(f"--input {value.name}={path}")
    print(" ".join(flags))


def compare(args):
    model = onnx.load(args.model, load_external_data=False)
    feed = {v.name: np.load(os.path.join(args.inputs, v.name + ".npy")) for v in graph_inputs(model)}
    session = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    failed = False
    for name, expected in zip(names, session.run(None, feed)):
        actual = np.load(os.path.join(args.outputs, name + ".npy"))
        if actual.shape != expected.shape or actual.dtype != expected.dtype:
            print(f"{name}: kiln gives {actual.dtype}{list(actual.shape)}, "
                  f"onnxruntime {expected.dtype}{list(expected.shape)}")
            failed = True
            continue
        error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        bound = args.atol + args.rtol * np.abs(expected.astype(np.float64))
        worst = float(np.max(error / np.maximum(bound, 1e-30))) if error.size else 0.0
        ok = bool(np.all(error <= bound))
        print(f"{name}: {'OK' if ok else 'MISMATCH'} (max abs error {error.max() if error.size else 0:.3g}, "
              f"{worst:.3g} of the tolerance)")
        failed |= not ok
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inputs = sub.add_parser("inputs")
    inputs.add_argument("model")
    inputs.add_argument("dir")
    inputs.add_argument("--shape", action="append", default=[])
    inputs.add_argument("--seed", type=int, default=0)
    inputs.add_argument("--vocab", type=int, default=1000, help="ids are drawn below this")
    check = sub.add_parser("compare")
    check.add_argument("model")
    check.add_argument("inputs")
    check.add_argument("outputs")
    check.add_argument("--rtol", type=float, default=1e-3)
    check.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args()
    if args.command == "inputs":
        make_inputs(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
