#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln against onnxruntime on a zoo of real architectures, on the host CPU.

    python3 tools/bench/zoo.py --setup          # once: a venv with torch & co.
    python3 tools/bench/zoo.py [--models resnet50,vit_b_16,...] [--threads 1,2]
                               [--rounds 3] [--iterations 10] [--warmup 2] [--symbolic]

Each model is built from code or a configuration with random weights
(torchvision, timm, transformers; nothing is downloaded), given real spread
(random BatchNorm statistics, every parameter that holds a single value
re-drawn) and exported with torch.onnx.export into build/zoo/. For each one
the script compiles it for the host, checks kiln's outputs against
onnxruntime's (largest error at most 1e-3 of the largest output magnitude),
then times kiln (`kiln bench`) and onnxruntime's CPU provider interleaved,
at each thread count, for several rounds, and keeps each side's best round
(the median of its iterations). It prints one row per model and thread count
with the ratio kiln / onnxruntime (below 1: kiln is faster) and the
geometric mean of the ratios per thread count.

With --symbolic, each model is exported with its batch (and a text
model's sequence) symbolic, compiled once with ranges (a batch of 1..8,
sequences of 1..384), its outputs checked against onnxruntime's at batch 1,
3 and 8 (text: 1x7, 3x128, 8x384), then timed at batch 1 and 8 (text at
sequence 128) against a static compile at that shape and onnxruntime, at
the first --threads count. It prints the ratios symbolic / static and
symbolic / onnxruntime, their geometric means and worst, and the compile
time against the static compiles'. With --symbolic --gpu-targets
sm_80,sm_90a,gfx942 each such model is compiled once for those targets
instead (ptxas checking the NVIDIA code) and run at the same three shapes
through the fake CUDA and HIP drivers the runtime's tests build (they
check every launch's grid and arguments, not results); it prints the
compile time, the kernels and products per plan, and the runs.

torch and friends are large and only this script needs them: `--setup`
installs them from PyPI into build/zoo-venv, and the script re-runs itself
under that interpreter when its own lacks torch. CI never runs it.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.path.join(ROOT, "build", "zoo-venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python3")
PACKAGES = ["torch", "torchvision", "timm", "transformers", "onnx", "onnxruntime", "numpy"]
IMAGE = [1, 3, 224, 224]
SEQUENCE = 128


def setup():
    subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([VENV_PYTHON, "-m", "pip", "install", "--quiet"] + PACKAGES, check=True)
    print(f"installed {' '.join(PACKAGES)} into {VENV}")


try:
    import numpy as np
    import torch

    import peers
    import symbolic
except ImportError:
    if "--setup" in sys.argv:
        setup()
        sys.exit(0)
    if os.path.exists(VENV_PYTHON) and os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)
    sys.exit("zoo.py needs torch, torchvision, timm and transformers: "
             "run `python3 tools/bench/zoo.py --setup` first")

# tools/bench's own modules are imported: the directory leaves the path, or
# transformers would take kernels.py for Hugging Face's `kernels` package.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != HERE]


# ---------------------------------------------------------------------------
# The zoo: name -> (family, builder). A builder returns (module, inputs), the
# inputs as an ordered dict of name -> example tensor at batch 1.
# ---------------------------------------------------------------------------


def vision(constructor, **kwargs):
    def build():
        import torchvision
        model = getattr(torchvision.models, constructor)(weights=None, **kwargs)
        return model, {"input": torch.randn(IMAGE)}
    return build


def timm_model(name):
    def build():
        import timm
        return timm.create_model(name, pretrained=False), {"input": torch.randn(IMAGE)}
    return build


class Encoder(torch.nn.Module):
    """A transformers model's first output (the last hidden state) as a
    plain tensor, so that the export has one named output."""

    def __init__(self, model, token_types=False):
        super().__init__()
        self.model = model
        self.token_types = token_types

    def forward(self, input):
        # Token types given, so that BERT does not gather them from a buffer.
        extra = {"token_type_ids": torch.zeros_like(input)} if self.token_types else {}
        return self.model(input, **extra, return_dict=False)[0]


def text(config_name, **overrides):
    def build():
        import transformers
        config = getattr(transformers, config_name)(**overrides)
        config._attn_implementation = "eager"
        model = transformers.AutoModel.from_config(config)
        ids = torch.randint(0, 1000, (1, SEQUENCE))
        return Encoder(model, token_types=config_name == "BertConfig"), {"input_ids": ids}
    return build


def whisper_encoder():
    import transformers
    config = transformers.WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6,
                                        decoder_layers=4, decoder_attention_heads=6,
                                        encoder_ffn_dim=1536, decoder_ffn_dim=1536)
    config._attn_implementation = "eager"
    encoder = transformers.WhisperModel(config).get_encoder()
    return Encoder(encoder), {"input_features": torch.randn(1, 80, 3000)}


ZOO = {
    "resnet50": ("residual CNN", vision("resnet50")),
    "mobilenet_v2": ("mobile CNN", vision("mobilenet_v2")),
    "mobilenet_v3_small": ("mobile CNN, squeeze-excitation", vision("mobilenet_v3_small")),
    "efficientnet_b0": ("depthwise, squeeze-excitation", vision("efficientnet_b0")),
    "regnet_y_400mf": ("grouped, squeeze-excitation", vision("regnet_y_400mf")),
    "shufflenet_v2": ("channel shuffle", vision("shufflenet_v2_x1_0")),
    "squeezenet": ("fire modules", vision("squeezenet1_1")),
    "densenet121": ("dense CNN", vision("densenet121")),
    "googlenet": ("inception-style", vision("googlenet", aux_logits=False, init_weights=True)),
    "convnext_tiny": ("ConvNeXt", vision("convnext_tiny")),
    "vit_b_16": ("vision transformer", timm_model("vit_base_patch16_224")),
    "bert_base": ("text encoder", text("BertConfig")),
    "distilbert": ("text encoder", text("DistilBertConfig")),
    "whisper_tiny_encoder": ("speech encoder", whisper_encoder),
}


def spread(model, seed):
    """Random BatchNorm statistics, and every parameter or buffer that holds
    one value (LayerNorm's ones and zeros, zero biases) re-drawn around it:
    without this, deep random networks collapse towards constant outputs and
    every compiler agrees on them."""
    generator = torch.Generator().manual_seed(seed)

    def noise(tensor, scale):
        return torch.randn(tensor.shape, generator=generator) * scale

    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.running_mean.copy_(noise(module.running_mean, 0.1))
                module.running_var.copy_(torch.rand(module.running_var.shape,
                                                    generator=generator) + 0.5)
        for tensor in list(model.parameters()) + list(model.buffers()):
            if tensor.is_floating_point() and tensor.numel() > 1 and bool(
                    torch.all(tensor == tensor.reshape(-1)[0])):
                tensor.add_(noise(tensor, 0.1))


def export(name, path, symbolic=False):
    """Exports zoo model `name` to `path` with fixed shapes, or with its
    batch (and a text model's sequence) symbolic; returns its inputs."""
    # nn.MultiheadAttention's fused inference path has no ONNX export.
    torch.backends.mha.set_fastpath_enabled(False)
    model, inputs = ZOO[name][1]()
    model.eval()
    spread(model, seed=len(name))
    axes = None
    if symbolic:
        text = "input_ids" in inputs
        dims = {0: "batch", 1: "sequence"} if text else {0: "batch"}
        axes = {n: dims for n in list(inputs) + ["output"]}
    with torch.no_grad():
        torch.onnx.export(model, tuple(inputs.values()), path, input_names=list(inputs),
                          output_names=["output"], opset_version=17, dynamo=False,
                          dynamic_axes=axes)
    return {input: tensor.numpy() for input, tensor in inputs.items()}


# ---------------------------------------------------------------------------
# Running and timing
# ---------------------------------------------------------------------------


def kiln_median(kiln, artifact, threads, warmup, iterations):
    out = subprocess.run([kiln, "bench", artifact, "--warmup", str(warmup), "--iterations",
                          str(iterations), "--threads", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"p50 ([0-9.]+) ms", out).group(1))


def check(kiln, artifact, feed, expected, work):
    """kiln's outputs against onnxruntime's: the largest error over the
    largest magnitude of each output."""
    arguments = [kiln, "run", artifact, "--output-dir", work]
    for name, array in feed.items():
        path = os.path.join(work, name + ".in.npy")
        np.save(path, array)
        arguments.append(f"--input={name}={path}")
    subprocess.run(arguments, check=True, capture_output=True, text=True)
    worst = 0.0
    for name, reference in expected.items():
        actual = np.load(os.path.join(work, name + ".npy"))
        scale = max(float(np.max(np.abs(reference))), 1e-30)
        worst = max(worst, float(np.max(np.abs(actual.astype(np.float64) - reference))) / scale)
    return worst


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


# Symbolic mode: each model's ranges, the sizes its outputs are checked at
# and the sizes it is timed at, (batch,) or (batch, sequence).
SYMBOLIC_CHECKED = {"image": [(1,), (3,), (8,)], "text": [(1, 7), (3, 128), (8, 384)]}
SYMBOLIC_TIMED = {"image": [(1,), (8,)], "text": [(1, 128), (8, 128)]}


FAKES = [os.path.join(ROOT, "build", "test", "unit", "runtime", fake)
         for fake in ("fake-cuda", "fake-hip")]


def symbolic_gpu(args, name, path, flags, inputs, kind, work):
    """The symbolic model compiled once for --gpu-targets (ptxas checks the
    NVIDIA code), then run at each checked shape through the fake CUDA and
    HIP drivers of the runtime's tests, which check each launch's grid and
    arguments against the artifact (not its results: no GPU runs)."""
    artifact = os.path.join(work, name + "-gpu.kiln")
    try:
        seconds = symbolic.compile_seconds(args.kiln, path, artifact,
                                           flags + [f"--target={args.gpu_targets}"])
    except subprocess.CalledProcessError:
        print(f"{name}: does not compile for {args.gpu_targets} with symbolic shapes", flush=True)
        return False
    described = json.loads(subprocess.run([args.kiln, "inspect", "--json", artifact],
                                          capture_output=True, text=True, check=True).stdout)
    kernels = [len(plan["kernels"]) for plan in described["plans"]]
    products = [sum(k["kind"] == "matmul" for k in plan["kernels"])
                for plan in described["plans"]]
    environment = dict(os.environ, LD_LIBRARY_PATH=":".join(FAKES))
    ran = []
    for device in ("cuda:0", "hip:0"):
        for sizes in SYMBOLIC_CHECKED[kind]:
            feed = symbolic.feed_at(inputs, symbolic.shapes_at(inputs, sizes))
            command = symbolic.run_command(args.kiln, artifact, feed, work, ["--device", device])
            done = subprocess.run(command, capture_output=True, text=True, env=environment)
            if done.returncode != 0:
                print(f"{name}: {device} at {'x'.join(map(str, sizes))}: "
                      f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}", flush=True)
                return False
            ran.append(f"{device} {'x'.join(map(str, sizes))}")
    print(f"| {name} | {seconds:.1f} s | {' / '.join(map(str, kernels))} | "
          f"{' / '.join(map(str, products))} | {', '.join(ran)} |", flush=True)
    return True


def symbolic_main(args, names):
    """Each model exported with a symbolic batch (and sequence), compiled
    once with ranges, checked against onnxruntime at three shapes and
    timed against a static compile and onnxruntime at batch 1 and 8."""

    print(f"uptime: {os.getloadavg()[0]:.2f} load average; {args.rounds} rounds of "
          f"{args.iterations} runs, best round's median; {args.threads} thread(s)", flush=True)
    if args.gpu_targets:
        print(f"| model | compile for {args.gpu_targets} | kernels per plan | products per plan "
              "| run through the fake drivers |\n| --- | --- | --- | --- | --- |", flush=True)
    threads = int(args.threads.split(",")[0])
    against_static, against_ort, compiles, failures, mismatched = [], [], [], [], []
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            path = os.path.join(args.model_dir, name + "-symbolic.onnx")
            if args.reexport or not os.path.exists(path):
                export(name, path, symbolic=True)
            session, inputs = symbolic.graph_inputs(path)
            kind = "text" if inputs[0][0] == "input_ids" else "image"
            rest = [str(d) for d in inputs[0][2][1:]]
            ranges = ["1..8", "1..384"] if kind == "text" else ["1..8"] + rest
            flags = [f"--input-shape={n}={'x'.join(ranges)}" for n, _, _ in inputs]
            if args.gpu_targets:
                if not symbolic_gpu(args, name, path, flags, inputs, kind, work):
                    failures.append(name)
                continue
            artifact = os.path.join(work, name + ".kiln")
            try:
                seconds = symbolic.compile_seconds(args.kiln, path, artifact, flags)
            except subprocess.CalledProcessError:
                print(f"{name}: does not compile with symbolic shapes", flush=True)
                failures.append(name)
                continue
            errors = []
            for sizes in SYMBOLIC_CHECKED[kind]:
                feed = symbolic.feed_at(inputs, symbolic.shapes_at(inputs, sizes))
                errors.append(symbolic.check_outputs(args.kiln, artifact, session, feed, work))
            if max(errors) > 1e-3:
                mismatched.append(name)
            print(f"{name}: compiled once in {seconds:.1f} s; largest error at "
                  f"{', '.join('x'.join(map(str, s)) for s in SYMBOLIC_CHECKED[kind])}: "
                  f"{max(errors):.1e}", flush=True)
            peer = peers.onnxruntime_session(path, threads)
            symbols = ["batch", "sequence"][:len(SYMBOLIC_TIMED[kind][0])]
            for sizes in SYMBOLIC_TIMED[kind]:
                shapes = symbolic.shapes_at(inputs, sizes)
                feed = symbolic.feed_at(inputs, shapes)
                static = os.path.join(work, name + "-static.kiln")
                static_seconds = symbolic.compile_seconds(
                    args.kiln, path, static,
                    [f"--input-shape={n}={'x'.join(map(str, s))}" for n, s in shapes.items()])
                sizes_flags = [f"--size={symbol}={size}" for symbol, size in zip(symbols, sizes)]
                best = [math.inf] * 3
                for _ in range(args.rounds):
                    best[0] = min(best[0], symbolic.kiln_median(
                        args.kiln, artifact, sizes_flags, threads, args.warmup, args.iterations))
                    best[1] = min(best[1], symbolic.kiln_median(
                        args.kiln, static, [], threads, args.warmup, args.iterations))
                    best[2] = min(best[2], peers.onnxruntime_median(peer, feed, args.warmup,
                                                                    args.iterations))
                shape = "x".join(map(str, sizes))
                against_static.append((best[0] / best[1], f"{name} {shape}"))
                against_ort.append((best[0] / best[2], f"{name} {shape}"))
                compiles.append(seconds / static_seconds)
                print(f"| {name} | {shape} | {best[0]:.2f} ms | {best[1]:.2f} ms | "
                      f"{best[2]:.2f} ms | {best[0] / best[1]:.2f}x | {best[0] / best[2]:.2f}x | "
                      f"{seconds:.1f} s / {static_seconds:.1f} s |", flush=True)
    for label, ratios in (("symbolic / static", against_static),
                          ("symbolic / onnxruntime", against_ort)):
        if ratios:
            worst = max(ratios)
            print(f"{label}: geometric mean {geometric_mean([r for r, _ in ratios]):.2f}x, "
                  f"worst {worst[0]:.2f}x ({worst[1]})")
    if compiles:
        print(f"compile symbolic / static: geometric mean {geometric_mean(compiles):.2f}x, "
              f"worst {max(compiles):.2f}x")
    if failures:
        print(f"does not compile: {', '.join(failures)}")
    if mismatched:
        print(f"outputs differ from onnxruntime's (over 1e-3): {', '.join(mismatched)}")
    return 1 if failures or mismatched else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", action="store_true", help="install torch & co. and stop")
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--models", default=",".join(ZOO))
    parser.add_argument("--model-dir", default=os.path.join(ROOT, "build", "zoo"))
    parser.add_argument("--reexport", action="store_true", help="export even if the file exists")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--compile-flags", default="", help="extra kiln compile flags")
    parser.add_argument("--symbolic", action="store_true",
                        help="one artifact per model for every batch (and sequence)")
    parser.add_argument("--gpu-targets", default="", metavar="LIST",
                        help="with --symbolic: compile for these GPU targets instead, and run "
                             "through the runtime tests' fake drivers (no timing)")
    args = parser.parse_args()
    if args.setup:
        setup()
        return
    names = args.models.split(",")
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        sys.exit(f"unknown models {unknown}; the zoo has {', '.join(ZOO)}")
    os.makedirs(args.model_dir, exist_ok=True)
    if args.symbolic:
        return symbolic_main(args, names)
    thread_counts = [int(t) for t in args.threads.split(",")]
    print(f"uptime: {os.getloadavg()[0]:.2f} load average; {args.rounds} rounds of "
          f"{args.iterations} runs, best round's median", flush=True)

    rows, failures = [], []
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            path = os.path.join(args.model_dir, name + ".onnx")
            inputs_path = os.path.join(args.model_dir, name + ".inputs.npz")
            if args.reexport or not os.path.exists(path) or not os.path.exists(inputs_path):
                np.savez(inputs_path, **export(name, path))
            feed = dict(np.load(inputs_path))
            artifact = os.path.join(work, name + ".kiln")
            flags = [f"--input-shape={n}={'x'.join(map(str, a.shape))}" for n, a in feed.items()]
            start = time.perf_counter()
            result = subprocess.run([args.kiln, "compile", path, "-o", artifact] + flags +
                                    args.compile_flags.split(), capture_output=True, text=True)
            compile_seconds = time.perf_counter() - start
            if result.returncode != 0:
                message = (result.stderr.strip().splitlines() or ["no message"])[0]
                failures.append((name, message))
                print(f"{name}: does not compile: {message}", flush=True)
                continue
            reference = peers.onnxruntime_session(path, 1)
            expected = dict(zip([o.name for o in reference.get_outputs()],
                                reference.run(None, feed)))
            error = check(args.kiln, artifact, feed, expected, work)
            best = {}
            for _ in range(args.rounds):
                for threads in thread_counts:
                    session = peers.onnxruntime_session(path, threads)
                    kiln_ms = kiln_median(args.kiln, artifact, threads, args.warmup,
                                          args.iterations)
                    ort_ms = peers.onnxruntime_median(session, feed, args.warmup, args.iterations)
                    previous = best.get(threads, (math.inf, math.inf))
                    best[threads] = (min(previous[0], kiln_ms), min(previous[1], ort_ms))
            for threads in thread_counts:
                kiln_ms, ort_ms = best[threads]
                rows.append((name, compile_seconds, error, threads, kiln_ms, ort_ms))
                print(f"{name:<22} compile {compile_seconds:5.1f}s  error {error:.1e}  "
                      f"threads {threads}  kiln {kiln_ms:8.2f} ms  onnxruntime {ort_ms:8.2f} ms  "
                      f"{kiln_ms / ort_ms:5.2f}x", flush=True)

    print("\n| model | family | compile | error | threads | kiln | onnxruntime | kiln / ort |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, compile_seconds, error, threads, kiln_ms, ort_ms in rows:
        first = threads == thread_counts[0]
        print(f"| {name if first else ''} | {ZOO[name][0] if first else ''} | "
              f"{f'{compile_seconds:.1f} s' if first else ''} | {f'{error:.1e}' if first else ''} "
              f"| {threads} | {kiln_ms:.2f} ms | {ort_ms:.2f} ms | {kiln_ms / ort_ms:.2f}x |")
    for threads in thread_counts:
        ratios = [r[4] / r[5] for r in rows if r[3] == threads]
        if ratios:
            print(f"\ngeometric mean at {threads} thread(s): {geometric_mean(ratios):.2f}x "
                  f"over {len(ratios)} models; worst {max(ratios):.2f}x")
    for name, message in failures:
        print(f"\n{name} does not compile: {message}")
    mismatched = [r[0] for r in rows if r[2] > 1e-3 and r[3] == thread_counts[0]]
    if mismatched:
        print(f"\noutputs differ from onnxruntime's (over 1e-3): {', '.join(mismatched)}")
    return 1 if failures or mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
