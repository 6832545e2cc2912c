#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One artifact for every shape against a static compile at each shape, and
against onnxruntime, on the host CPU.

    python3 tools/bench/symbolic.py [--models bert,gpt2,resnet50,...]
                                    [--threads 1] [--rounds 3]
                                    [--iterations 10] [--warmup 2]

Each model is compiled once with its symbolic dimensions (the ranges below),
and once per shape with every dimension fixed. At each shape the script
checks the symbolic artifact's outputs against onnxruntime's (largest error
at most 1e-3 of the largest output magnitude), then times the symbolic
artifact (`kiln bench --size`), the static one (`kiln bench`) and
onnxruntime interleaved, for several rounds, each keeping its best round's
median. It prints the compile times, and per shape the ratios symbolic /
static and symbolic / onnxruntime (below 1: the symbolic artifact is
faster), then the geometric mean and the worst of each.

The text models are the Hugging Face exports of test/models/transformers
(two layers, random weights) and the generated BERT-base; the CNNs are
test/models/generate.py's ResNet-50 and MobileNetV2, with a symbolic batch
and (`-images`) a symbolic batch, height and width.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime

import models
import peers

ROOT = models.ROOT
TRANSFORMERS = os.path.join(ROOT, "test", "models", "transformers")

# name: (source, its first input's --input-shape ranges (the others' are
# alike), the sizes of its symbols to time: (batch, sequence), (batch,) or
# (batch, height, width)).
MODELS = {
    "bert": ("transformers:bert", [], [(1, 7), (1, 128), (8, 33), (8, 128)]),
    "gpt2": ("transformers:gpt2", [], [(1, 7), (1, 128), (8, 33), (8, 128)]),
    "distilbert": ("transformers:distilbert", [], [(1, 7), (1, 128), (8, 33), (8, 128)]),
    "t5_encoder": ("transformers:t5_encoder", [], [(1, 7), (1, 128), (8, 33), (8, 128)]),
    "bert-base": ("generated:bert", ["--input-shape=input_ids=1..8x1..384"],
                  [(1, 7), (1, 128), (8, 128)]),
    "resnet50": ("generated:resnet50", ["--input-shape=input=1..8x3x224x224"], [(1,), (3,), (8,)]),
    "mobilenetv2": ("generated:mobilenetv2", ["--input-shape=input=1..8x3x224x224"],
                    [(1,), (3,), (8,)]),
    "resnet50-images": ("images:resnet50", ["--input-shape=input=1..2x3x64..320x64..320"],
                        [(1, 224, 224), (1, 128, 128), (2, 96, 160)]),
    "mobilenetv2-images": ("images:mobilenetv2",
                           ["--input-shape=input=1..2x3x64..320x64..320"],
                           [(1, 224, 224), (1, 128, 128), (2, 96, 160)]),
}


def source_path(source, model_dir):
    kind, name = source.split(":")
    if kind == "transformers":
        return os.path.join(TRANSFORMERS, name + ".onnx")
    path = models.ensure(model_dir, [name])[name]
    if kind == "images":
        # The generated model with its input's height and width symbolic.
        images = os.path.join(model_dir, name + "-images.onnx")
        if not os.path.exists(images):
            model = onnx.load(path)
            dims = model.graph.input[0].type.tensor_type.shape.dim
            for dim, symbol in ((dims[2], "height"), (dims[3], "width")):
                dim.dim_param = symbol
            del model.graph.value_info[:]
            onnx.save(model, images)
        path = images
    return path


def graph_inputs(path):
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session, [(i.name, i.type, i.shape) for i in session.get_inputs()]


def shapes_at(inputs, sizes):
    """Each input's shape at `sizes`: (batch, sequence) for text, (batch,) or
    (batch, height, width) for images."""
    shapes = {}
    for name, _, shape in inputs:
        if len(shape) == 2:
            shapes[name] = list(sizes)
        elif len(sizes) == 3:
            shapes[name] = [sizes[0], shape[1], sizes[1], sizes[2]]
        else:
            shapes[name] = [sizes[0]] + [d for d in shape[1:]]
    return shapes


def feed_at(inputs, shapes):
    rng = np.random.default_rng(0)
    feed = {}
    for name, kind, _ in inputs:
        if "int64" in kind:
            high = 2 if "mask" in name or "type" in name else 100
            feed[name] = rng.integers(0, high, shapes[name]).astype(np.int64)
            if "mask" in name:
                feed[name][...] = 1
        else:
            feed[name] = rng.standard_normal(shapes[name]).astype(np.float32)
    return feed


def compile_seconds(kiln, path, output, flags):
    start = time.perf_counter()
    subprocess.run([kiln, "compile", path, "-o", output] + flags, check=True,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def kiln_median(kiln, artifact, flags, threads, warmup, iterations):
    bench = subprocess.run([kiln, "bench", artifact, "--warmup", str(warmup), "--iterations",
                            str(iterations), "--threads", str(threads)] + flags,
                           check=True, capture_output=True, text=True).stdout
    return float(re.search(r"p50 ([0-9.]+) ms", bench).group(1))


def run_command(kiln, artifact, feed, work, extra=()):
    """`kiln run` of the artifact on `feed` (saved as .npy files in `work`),
    its outputs into work/out."""
    args = [kiln, "run", artifact, *extra, "--output-dir", os.path.join(work, "out")]
    for name, value in feed.items():
        np.save(os.path.join(work, name + ".npy"), value)
        args += ["--input", f"{name}={os.path.join(work, name + '.npy')}"]
    return args


def check_outputs(kiln, artifact, session, feed, work):
    """The largest error of the artifact's outputs at `feed` against
    onnxruntime's, over the largest magnitude of each (infinite when a
    shape differs)."""
    subprocess.run(run_command(kiln, artifact, feed, work), check=True, capture_output=True)
    worst = 0.0
    for output, expected in zip(session.get_outputs(), session.run(None, feed)):
        actual = np.load(os.path.join(work, "out", output.name + ".npy"))
        if actual.shape != expected.shape:
            print(f"{artifact}: '{output.name}' has shape {actual.shape}, "
                  f"onnxruntime's {expected.shape}")
            return math.inf
        scale = float(np.abs(expected).max()) or 1.0
        worst = max(worst, float(np.abs(actual.astype(np.float64) - expected).max()) / scale)
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=models.KILN)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--model-dir", default=models.DEFAULT_DIR)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()

    print(f"{'model':<12} {'shape':<10} {'symbolic':>10} {'static':>10} {'ort':>10} "
          f"{'sym/static':>10} {'sym/ort':>8}  compile sym/static")
    against_static, against_ort = [], []
    with tempfile.TemporaryDirectory() as work:
        for name in args.models.split(","):
            source, ranges, sizes_list = MODELS[name]
            path = source_path(source, args.model_dir)
            session, inputs = graph_inputs(path)
            # Inputs the model fixes are left as they are (a ranges flag
            # names the first input only).
            flags = list(ranges)
            for input_name, _, _ in inputs[1:]:
                for flag in ranges:
                    flags.append(flag.replace(f"={inputs[0][0]}=", f"={input_name}="))
            symbolic = os.path.join(work, name + ".kiln")
            symbolic_seconds = compile_seconds(args.kiln, path, symbolic, flags)
            peer = peers.onnxruntime_session(path, args.threads)
            listing = subprocess.run([args.kiln, "inspect", symbolic], check=True,
                                     capture_output=True, text=True).stdout
            symbols = re.findall(r"^  (\S+): \d+ to \d+, tuned", listing, re.M)
            for sizes in sizes_list:
                shapes = shapes_at(inputs, sizes)
                feed = feed_at(inputs, shapes)
                error = check_outputs(args.kiln, symbolic, session, feed, work)
                if error > 1e-3:
                    raise SystemExit(f"{name} at {sizes}: outputs differ from onnxruntime's "
                                     f"by {error:.2e}")
                static = os.path.join(work, name + "-static.kiln")
                static_flags = [f"--input-shape={n}={'x'.join(map(str, s))}"
                                for n, s in shapes.items()]
                static_seconds = compile_seconds(args.kiln, path, static, static_flags)
                size_flags = [f"--size={symbol}={size}"
                              for symbol, size in zip(symbols, sizes)]
                best = [math.inf] * 3
                for _ in range(args.rounds):
                    best[0] = min(best[0], kiln_median(args.kiln, symbolic, size_flags,
                                                       args.threads, args.warmup, args.iterations))
                    best[1] = min(best[1], kiln_median(args.kiln, static, [], args.threads,
                                                       args.warmup, args.iterations))
                    best[2] = min(best[2], peers.onnxruntime_median(peer, feed, args.warmup,
                                                                    args.iterations))
                against_static.append((best[0] / best[1], f"{name} {sizes}"))
                against_ort.append((best[0] / best[2], f"{name} {sizes}"))
                shape = "x".join(map(str, sizes))
                print(f"{name:<12} {shape:<10} {best[0]:>8.3f}ms {best[1]:>8.3f}ms "
                      f"{best[2]:>8.3f}ms {best[0] / best[1]:>9.2f}x {best[0] / best[2]:>7.2f}x  "
                      f"{symbolic_seconds:.1f}s / {static_seconds:.1f}s", flush=True)
    for label, ratios in (("symbolic / static", against_static),
                          ("symbolic / onnxruntime", against_ort)):
        mean = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        worst = max(ratios)
        print(f"{label}: geometric mean {mean:.2f}x, worst {worst[0]:.2f}x ({worst[1]})")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
