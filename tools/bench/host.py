#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln on the host CPU against onnxruntime's CPU provider, side by side.

    python3 tools/bench/host.py [--models resnet50,mobilenetv2,bert]
                                [--threads 1,2] [--rounds 3] [--iterations 10]
                                [--warmup 2]

For each model (from test/models/generate.py, batch 1, BERT at sequence 128)
it reports kiln's compile time, then for each thread count the median
latency of kiln (kiln bench --threads N) and of onnxruntime with N intra-op
threads on the same machine, and their ratio (kiln / onnxruntime: below 1
means kiln is faster). The two alternate for several rounds and each
keeps its best round's median: the machine is shared and noisy.
"""
import argparse
import os
import re
import subprocess
import tempfile
import time

import numpy as np

import models
import peers

def onnxruntime_latency(path, shapes, threads, warmup, iterations):
    session = peers.onnxruntime_session(path, threads)
    rng = np.random.default_rng(0)
    feed = {}
    for value in session.get_inputs():
        shape = shapes[value.name]
        feed[value.name] = (np.ones(shape, np.int64) if "int64" in value.type
                            else rng.standard_normal(shape).astype(np.float32))
    return peers.onnxruntime_median(session, feed, warmup, iterations)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=models.KILN)
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert")
    parser.add_argument("--model-dir", default=models.DEFAULT_DIR)
    parser.add_argument("--threads", default="1",
                        help="comma-separated thread counts, one row per count")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    paths = models.ensure(args.model_dir, args.models.split(","))

    thread_counts = [int(t) for t in args.threads.split(",")]
    print(f"{'model':<12} {'compile':>8} {'threads':>8} {'kiln p50':>10} {'ort p50':>10} "
          f"{'kiln/ort':>9}")
    with tempfile.TemporaryDirectory() as work:
        for name, path in paths.items():
            artifact = os.path.join(work, name + ".kiln")
            flags = models.shape_flags(name)
            start = time.perf_counter()
            subprocess.run([args.kiln, "compile", path, "-o", artifact] + flags, check=True)
            compile_seconds = time.perf_counter() - start
            for threads in thread_counts:
                kiln_ms = ort_ms = float("inf")
                for _ in range(args.rounds):
                    bench = subprocess.run([args.kiln, "bench", artifact, "--warmup",
                                            str(args.warmup), "--iterations", str(args.iterations),
                                            "--threads", str(threads)],
                                           check=True, capture_output=True, text=True).stdout
                    kiln_ms = min(kiln_ms, float(re.search(r"p50 ([0-9.]+) ms", bench).group(1)))
                    ort_ms = min(ort_ms, onnxruntime_latency(path, models.INPUT_SHAPES[name],
                                                             threads, args.warmup,
                                                             args.iterations))
                print(f"{name:<12} {compile_seconds:>7.1f}s {threads:>8} {kiln_ms:>8.1f}ms "
                      f"{ort_ms:>8.1f}ms {kiln_ms / ort_ms:>8.2f}x", flush=True)


if __name__ == "__main__":
    main()
