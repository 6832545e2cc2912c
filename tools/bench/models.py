# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The generated models the benchmark scripts use and the input shapes they
are compiled with (batch 1, BERT at sequence 128)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DIR = os.path.join(ROOT, "build", "models")
KILN = os.path.join(ROOT, "build", "bin", "kiln")

INPUT_SHAPES = {
    "conv_relu": {},
    "resnet50": {"input": [1, 3, 224, 224]},
    "mobilenetv2": {"input": [1, 3, 224, 224]},
    "bert": {"input_ids": [1, 128], "attention_mask": [1, 128]},
}


def shape_flags(name):
    """kiln compile's --input-shape flags for a model."""
    return [f"--input-shape={input}={'x'.join(map(str, shape))}"
            for input, shape in INPUT_SHAPES[name].items()]


def ensure(model_dir, names):
    """Generates the models of `names` that `model_dir` lacks; returns their paths."""
    missing = [n for n in names if not os.path.exists(os.path.join(model_dir, n + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                        "--out", model_dir, "--models", ",".join(missing)], check=True)
    return {name: os.path.join(model_dir, name + ".onnx") for name in names}
