#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Measures how fast kiln imports the generated models, and its peak memory.

    python3 tools/bench/import.py [--kiln build/bin/kiln] [--models DIR] [--repeat 5]

For each model it runs `kiln compile MODEL --emit kiln --timing -o /dev/null`
--repeat times in fresh processes and reports the median of
  - the import phase alone (kiln's own --timing report),
  - the whole process (wall clock),
  - the peak resident memory, also net of a process that imports nothing
    but a two-node model (libMLIR, libLLVM and the registries), compared
    with the model's weight bytes.
Models are generated with test/models/generate.py when DIR lacks them.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import models

IMPORT_LINE = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+import ONNX$", re.M)


def weight_bytes(path):
    """The initializers' bytes, counted in a child process: a child forked
    from this one would otherwise start with the model in its resident set."""
    script = (
        "import onnx, sys\n"
        "m = onnx.load(sys.argv[1], load_external_data=False)\n"
        "print(sum(len(t.raw_data) for t in m.graph.initializer))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, path], check=True,
                            capture_output=True, text=True)
    return int(result.stdout)


def run_once(kiln, path, extra):
    command = [kiln, "compile", path, "--emit", "kiln", "--timing", "-o", os.devnull] + extra
    start = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    report = process.stderr.read()
    if status != 0:
        sys.exit(f"kiln failed on {path}:\n{report}")
    match = IMPORT_LINE.search(report)
    return float(match.group(1)), wall, usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=models.KILN)
    parser.add_argument("--models", default=models.DEFAULT_DIR)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    names = list(models.INPUT_SHAPES)
    models.ensure(args.models, names)

    baseline = None
    print(f"{'model':<12} {'weights':>9} {'import':>8} {'process':>8} {'peak RSS':>9} "
          f"{'net RSS':>8} {'net/weights':>11}")
    for name in names:
        path = os.path.join(args.models, name + ".onnx")
        runs = [run_once(args.kiln, path, models.shape_flags(name)) for _ in range(args.repeat)]
        imported = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        rss = statistics.median(r[2] for r in runs)
        if baseline is None:
            baseline = rss  # the two-node model: the process's own footprint
        weights = weight_bytes(path)
        net = rss - baseline
        ratio = f"{net / weights:.2f}x" if weights > 1 << 20 else "-"
        print(f"{name:<12} {weights / 2**20:>7.1f}Mi {imported:>7.3f}s {wall:>7.3f}s "
              f"{rss / 2**20:>7.0f}Mi {net / 2**20:>6.0f}Mi {ratio:>11}")


if __name__ == "__main__":
    main()
