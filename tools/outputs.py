#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fingerprints what kiln emits, to show a refactoring changed no output.

Compiles conv_relu, ResNet-50, MobileNetV2 and a 2-layer BERT encoder
(test/models/generate.py) into artifacts for host,sm_80,sm_90,sm_90a, into
PTX for each NVIDIA target and into a gfx942 code object, and prints one
SHA-256 a file. kiln's output is deterministic, so two builds that emit the
same code print the same list:

    python3 tools/outputs.py --kiln build/bin/kiln > before.txt
    ... change the compiler, rebuild ...
    python3 tools/outputs.py --kiln build/bin/kiln --compare before.txt
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODELS = {
    "conv_relu": [],
    "resnet50": ["--input-shape", "input=1x3x224x224"],
    "mobilenetv2": ["--input-shape", "input=1x3x224x224"],
    "bert": ["--input-shape", "input_ids=1x64", "--input-shape", "attention_mask=1x64"],
}

# (file suffix, kiln compile arguments)
OUTPUTS = [
    ("kiln", ["--target", "host,sm_80,sm_90,sm_90a"]),
    ("sm_80.ptx", ["--target", "sm_80", "--emit", "ptx"]),
    ("sm_90.ptx", ["--target", "sm_90", "--emit", "ptx"]),
    ("sm_90a.ptx", ["--target", "sm_90a", "--emit", "ptx"]),
    ("gfx942.hsaco", ["--target", "gfx942", "--emit", "hsaco"]),
]


def fingerprints(kiln, work):
    subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                    "--out", work, "--models", ",".join(MODELS), "--layers", "2"],
                   check=True, stdout=subprocess.DEVNULL)
    for model, shapes in MODELS.items():
        for suffix, arguments in OUTPUTS:
            output = os.path.join(work, f"{model}.{suffix}")
            subprocess.run([kiln, "compile", os.path.join(work, f"{model}.onnx"), *shapes,
                            *arguments, "-o", output], check=True)
            with open(output, "rb") as f:
                yield f"{model}.{suffix}", hashlib.sha256(f.read()).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--compare", help="a list this script printed before")
    parser.add_argument("--keep", help="leave the models and outputs in this folder")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or scratch
        os.makedirs(work, exist_ok=True)
        lines = [f"{digest}  {name}" for name, digest in fingerprints(args.kiln, work)]
    if not args.compare:
        print("\n".join(lines))
        return 0
    with open(args.compare) as f:
        before = dict(reversed(line.split()) for line in f if line.strip())
    after = dict(reversed(line.split()) for line in lines)
    changed = [name for name in sorted(before.keys() | after.keys())
               if before.get(name) != after.get(name)]
    for name in changed:
        print(f"changed: {name}")
    print(f"{len(after) - len(changed)} of {len(after)} outputs byte-identical")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
