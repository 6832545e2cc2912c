#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Measures how kiln's compile time and memory grow with a graph's width and
depth: a chain of elementwise nodes, a Concat of many inputs, a Split into
many outputs, and a graph whose many outputs are one value.

    python3 tools/bench/large_graphs.py [--kiln build/bin/kiln] [--sizes chain=1000,10000]
                                        [--timeout 120]

Each model is compiled for the host (x86-64-v3) in a fresh process; the
script prints the wall-clock time, the peak resident memory and kiln's own
slowest phases (--timing), one line per model. A size that runs past
--timeout is reported as such. Check `uptime` first: the machine is shared.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper

DEFAULT_SIZES = "chain=1000,10000,100000;concat=100,1000,10000;split=100,1000,10000;outputs=1000,10000"


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def build(kind, n):
    if kind == "chain":
        names = ["x"] + [f"v{i}" for i in range(n - 1)] + ["y"]
        nodes = [helper.make_node("Relu", [names[i]], [names[i + 1]], name=f"relu{i}")
                 for i in range(n)]
        graph = helper.make_graph(nodes, "chain", [tensor("x", [64])], [tensor("y", [64])])
    elif kind == "concat":
        node = helper.make_node("Concat", [f"x{i}" for i in range(n)], ["y"], axis=0,
                                name="concat")
        graph = helper.make_graph([node], "concat", [tensor(f"x{i}", [4]) for i in range(n)],
                                  [tensor("y", [4 * n])])
    elif kind == "split":
        sizes = helper.make_tensor("sizes", TensorProto.INT64, [n], [4] * n)
        node = helper.make_node("Split", ["x", "sizes"], [f"y{i}" for i in range(n)], axis=0,
                                name="split")
        graph = helper.make_graph([node], "split", [tensor("x", [4 * n])],
                                  [tensor(f"y{i}", [4]) for i in range(n)], [sizes])
    else:
        nodes = [helper.make_node("Relu", ["x"], [f"y{i}"], name=f"relu{i}") for i in range(n)]
        graph = helper.make_graph(nodes, "outputs", [tensor("x", [4])],
                                  [tensor(f"y{i}", [4]) for i in range(n)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


PHASE = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*)$")


def measure(kiln, model, timeout):
    """Wall seconds, peak KiB and the three slowest phases, or None past the
    timeout."""
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "m.onnx")
        onnx.save(model, path)
        start = time.monotonic()
        try:
            done = subprocess.run(["/usr/bin/time", "-f", "%M", kiln, "compile", path, "--target",
                                   "host", "--host-cpu", "x86-64-v3", "--timing", "-o",
                                   os.path.join(work, "m.kiln")],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        wall = time.monotonic() - start
        if done.returncode != 0:
            sys.exit(done.stderr)
        lines = done.stderr.strip().splitlines()
        peak = int(lines[-1])
        phases = []
        for line in lines:
            match = PHASE.match(line)
            if match and match.group(3).strip() not in ("Total", "Rest") and \
                    not match.group(3).startswith(("code generation", "'func.func'", "LLVM")):
                phases.append((float(match.group(2)), match.group(3).strip()))
        phases.sort(reverse=True)
        return wall, peak, phases[:3]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default="build/bin/kiln")
    parser.add_argument("--sizes", default=DEFAULT_SIZES,
                        help="KIND=N,N;... with KIND chain, concat, split or outputs")
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    print(f"{'graph':<16} {'seconds':>8} {'peak MiB':>9}  slowest phases")
    for spec in args.sizes.split(";"):
        kind, sizes = spec.split("=")
        if kind not in ("chain", "concat", "split", "outputs"):
            sys.exit(f"unknown graph kind '{kind}': chain, concat, split or outputs")
        for n in (int(size) for size in sizes.split(",")):
            result = measure(args.kiln, build(kind, n), args.timeout)
            label = f"{kind} {n}"
            if result is None:
                print(f"{label:<16} {'>' + str(int(args.timeout)):>8}")
                continue
            wall, peak, phases = result
            slowest = ", ".join(f"{name} {seconds:.1f} s" for seconds, name in phases)
            print(f"{label:<16} {wall:8.1f} {peak / 1024:9.0f}  {slowest}", flush=True)


if __name__ == "__main__":
    main()
