#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Kernel counts of the generated models, without and with graph fusion.

    python3 tools/bench/kernels.py [--models resnet50,mobilenetv2,bert]

For each model (from test/models/generate.py, batch 1, BERT at sequence 128)
it compiles the host artifact twice, with `--no-fusion` and with the default
pipeline, and prints the number of kernels in each plan (`kiln inspect`),
with the model's ONNX node count for scale.
"""
import argparse
import os
import re
import subprocess
import tempfile

import onnx

import models


def kernels(kiln, model, flags, artifact):
    subprocess.run([kiln, "compile", model, "-o", artifact] + flags, check=True)
    listing = subprocess.run([kiln, "inspect", artifact], check=True, capture_output=True,
                             text=True).stdout
    return int(re.search(r"^kernels: (\d+)", listing, re.M).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=models.KILN)
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert")
    parser.add_argument("--model-dir", default=models.DEFAULT_DIR)
    args = parser.parse_args()
    paths = models.ensure(args.model_dir, args.models.split(","))

    print(f"{'model':<12} {'ONNX nodes':>10} {'kernels, no fusion':>19} {'kernels':>8}")
    with tempfile.TemporaryDirectory() as work:
        for name, path in paths.items():
            nodes = len(onnx.load(path, load_external_data=False).graph.node)
            artifact = os.path.join(work, name + ".kiln")
            flags = models.shape_flags(name)
            unfused = kernels(args.kiln, path, flags + ["--no-fusion"], artifact)
            fused = kernels(args.kiln, path, flags, artifact)
            print(f"{name:<12} {nodes:>10} {unfused:>19} {fused:>8}", flush=True)


if __name__ == "__main__":
    main()
