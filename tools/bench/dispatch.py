#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What a host kernel costs beyond its work: the runtime's dispatch.

    python3 tools/bench/dispatch.py [--kernels 200,400] [--sizes 256,65536]

Builds chains of N Add nodes (x = x + c) on a [1, S] tensor, compiles them
with --no-fusion (so each Add is a kernel of its own) and times them with
`kiln bench` at 1 and 2 threads. The time per kernel is the slope between
the two chain lengths, so the run's fixed costs drop out. Kernels of S =
256 run on the calling thread; from 65536 iterations a kernel is split
into tasks for the session's threads (kiln-parallelize-kernels), and what
two threads cost over half of one thread's time is the fork-join.
"""
import argparse
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def chain(path, kernels, size):
    nodes, value = [], "x"
    constant = numpy_helper.from_array(np.full([1, size], 0.5, np.float32), "c")
    for i in range(kernels):
        out = "y" if i == kernels - 1 else f"t{i}"
        nodes.append(helper.make_node("Add", [value, "c"], [out], name=f"add{i}"))
        value = out
    graph = helper.make_graph(nodes, "chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, size])],
                              [constant])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def best_ms(kiln, artifact, threads, rounds=5):
    best = float("inf")
    for _ in range(rounds):
        out = subprocess.run([kiln, "bench", artifact, "--threads", str(threads), "--warmup", "20",
                              "--iterations", "200"], check=True, capture_output=True,
                             text=True).stdout
        best = min(best, float(re.search(r"p50 ([0-9.]+) ms", out).group(1)))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--kernels", default="200,400")
    parser.add_argument("--sizes", default="256,65536")
    args = parser.parse_args()
    short, long = (int(n) for n in args.kernels.split(","))
    print(f"uptime: {os.getloadavg()[0]:.2f} load average")
    print("| elements | threads | per kernel |")
    print("| --- | --- | --- |")
    with tempfile.TemporaryDirectory() as work:
        for size in (int(s) for s in args.sizes.split(",")):
            artifacts = {}
            for kernels in (short, long):
                path = os.path.join(work, f"chain{kernels}_{size}.onnx")
                chain(path, kernels, size)
                artifacts[kernels] = path.replace(".onnx", ".kiln")
                subprocess.run([args.kiln, "compile", path, "--no-fusion", "-o",
                                artifacts[kernels]], check=True)
            for threads in (1, 2):
                slope = (best_ms(args.kiln, artifacts[long], threads) -
                         best_ms(args.kiln, artifacts[short], threads)) / (long - short)
                print(f"| {size} | {threads} | {slope * 1000:.2f} us |", flush=True)


if __name__ == "__main__":
    main()
