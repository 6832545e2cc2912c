#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What each precision costs in accuracy, measured on the host.

    python3 tools/bench/precision.py [--models resnet50,mobilenetv2,bert]
                                     [--precisions tf32,fp16,bf16,fp8]
                                     [--samples 32]

kiln's host target rounds a low-precision product's operands exactly as a
GPU would (kiln-assign-precision), so `kiln run` on the host shows the
error. For each model (from test/models/generate.py, BERT at sequence 128)
this compiles an fp32 artifact and one per precision at batch --samples,
runs them all on the same inputs (images from N(0, 1); token ids uniform,
attention mask of ones) and prints, against fp32: the largest absolute
error, the largest error relative to the output's largest magnitude, and
for the classifiers the share of inputs whose top-1 class is unchanged.
FP8 activation scales come from `kiln calibrate` over 16 other inputs.
"""
import argparse
import os
import subprocess
import tempfile

import numpy as np

import models

CLASSIFIERS = {"resnet50", "mobilenetv2"}


def make_inputs(name, batch, seed):
    rng = np.random.default_rng(seed)
    shapes = models.INPUT_SHAPES[name]
    inputs = {}
    for input, shape in shapes.items():
        shape = [batch] + shape[1:]
        if input == "input_ids":
            inputs[input] = rng.integers(0, 1000, shape).astype(np.int64)
        elif input == "attention_mask":
            inputs[input] = np.ones(shape, np.int64)
        else:
            inputs[input] = rng.standard_normal(shape).astype(np.float32)
    return inputs


def shape_flags(name, batch):
    return [f"--input-shape={input}={'x'.join(map(str, [batch] + shape[1:]))}"
            for input, shape in models.INPUT_SHAPES[name].items()]


def run(kiln, artifact, input_files, out_dir):
    flags = [f"--input={name}={path}" for name, path in input_files.items()]
    subprocess.run([kiln, "run", artifact, f"--output-dir={out_dir}"] + flags, check=True,
                   stdout=subprocess.DEVNULL)
    return {f[:-4]: np.load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=models.KILN)
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert")
    parser.add_argument("--precisions", default="tf32,fp16,bf16,fp8")
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--model-dir", default=models.DEFAULT_DIR)
    args = parser.parse_args()
    paths = models.ensure(args.model_dir, args.models.split(","))

    print(f"{'model':<12} {'precision':>9} {'max abs error':>14} {'max rel error':>14} "
          f"{'top-1 agreement':>16}")
    with tempfile.TemporaryDirectory() as work:
        for name, path in paths.items():
            folder = os.path.join(work, name)
            os.makedirs(folder)
            input_files = {}
            for input, array in make_inputs(name, args.samples, seed=0).items():
                input_files[input] = os.path.join(folder, input + ".npy")
                np.save(input_files[input], array)
            # Calibration samples: other inputs, one per folder, at batch 1.
            calibration_dir = os.path.join(folder, "calibration")
            for i in range(16):
                sample = os.path.join(calibration_dir, f"{i:02d}")
                os.makedirs(sample)
                for input, array in make_inputs(name, 1, seed=100 + i).items():
                    np.save(os.path.join(sample, input + ".npy"), array)
            scales = os.path.join(folder, "scales.json")
            subprocess.run([args.kiln, "calibrate", path, "--inputs", calibration_dir, "-o",
                            scales] + shape_flags(name, 1), check=True,
                           stdout=subprocess.DEVNULL)

            outputs = {}
            for precision in ["fp32"] + args.precisions.split(","):
                artifact = os.path.join(folder, precision + ".kiln")
                flags = shape_flags(name, args.samples) + [f"--precision={precision}"]
                if precision == "fp8":
                    flags.append(f"--calibration={scales}")
                subprocess.run([args.kiln, "compile", path, "-o", artifact] + flags, check=True)
                outputs[precision] = run(args.kiln, artifact, input_files,
                                         os.path.join(folder, precision))
                if precision == "fp32":
                    continue
                reference = outputs["fp32"]
                abs_error = max(np.abs(outputs[precision][k] - reference[k]).max()
                                for k in reference)
                rel_error = max(np.abs(outputs[precision][k] - reference[k]).max() /
                                np.abs(reference[k]).max() for k in reference)
                agreement = ""
                if name in CLASSIFIERS:
                    (key,) = reference
                    same = (outputs[precision][key].argmax(-1) == reference[key].argmax(-1))
                    agreement = f"{same.mean() * 100:.1f}%"
                print(f"{name:<12} {precision:>9} {abs_error:>14.3g} {rel_error:>14.3g} "
                      f"{agreement:>16}", flush=True)


if __name__ == "__main__":
    main()
