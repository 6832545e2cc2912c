#!/usr/bin/env python3
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
import sys
import tempfile

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPES = {
    "resnet50": ["--input-shape=input=1x3x224x224"],
    "mobilenetv2": ["--input-shape=input=1x3x224x224"],
    "bert": ["--input-shape=input_ids=1x128", "--input-shape=attention_mask=1x128"],
}


def kernels(kiln, model, flags, artifact):
    subprocess.run([kiln, "compile", model, "-o", artifact] + flags, check=True)
    listing = subprocess.run([kiln, "inspect", artifact], check=True, capture_output=True,
                             text=True).stdout
    return int(re.search(r"^kernels: (\d+)", listing, re.M).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert")
    parser.add_argument("--model-dir", default=os.path.join(ROOT, "build", "models"))
    args = parser.parse_args()
    names = args.models.split(",")
    missing = [n for n in names if not os.path.exists(os.path.join(args.model_dir, n + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                        "--out", args.model_dir, "--models", ",".join(missing)], check=True)

    print(f"{'model':<12} {'ONNX nodes':>10} {'kernels, no fusion':>19} {'kernels':>8}")
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            path = os.path.join(args.model_dir, name + ".onnx")
            nodes = len(onnx.load(path, load_external_data=False).graph.node)
            artifact = os.path.join(work, name + ".kiln")
            unfused = kernels(args.kiln, path, SHAPES[name] + ["--no-fusion"], artifact)
            fused = kernels(args.kiln, path, SHAPES[name], artifact)
            print(f"{name:<12} {nodes:>10} {unfused:>19} {fused:>8}", flush=True)


if __name__ == "__main__":
    main()
