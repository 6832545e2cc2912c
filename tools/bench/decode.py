#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Decode steps of decoders exported with past key/values, from one kiln
artifact, against onnxruntime, on the host CPU.

    python3 tools/bench/decode.py [--models gpt2_small,llama_small]
                                  [--threads 1,2] [--prompt 32] [--steps 64]
                                  [--rounds 2]

Each model (test/models/export_decoders.py's full-size configurations,
random weights: GPT-2 small and a Llama-style model of 8 layers, 1024
hidden units and grouped-query attention) is exported by optimum into
build/decoders/ once (with build/optimum-venv's Python: optimum-onnx
`text-generation-with-past`), compiled once by kiln with no --input-shape,
and then, at each thread count, onnxruntime and kiln take turns (--rounds
of each, a whole generation a turn, so that neither's spinning threads
slow the other): a prefill of --prompt tokens and --steps greedy decode
steps, the past one longer each step, kiln following onnxruntime's
tokens. Every step's logits are checked against onnxruntime's (largest
error at most 1e-3 of the largest logit). The script prints the best
prefill time, the best median decode step of each, their ratio (below 1:
kiln is faster) and kiln's tokens per second.
Run it under build/venv's Python (kiln's package and onnxruntime).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime

import kiln
import models
import peers

ROOT = models.ROOT
OPTIMUM_PYTHON = os.path.join(ROOT, "build", "optimum-venv", "bin", "python3")


def ensure_exported(name, model_dir):
    path = os.path.join(model_dir, f"{name}-past.onnx")
    if not os.path.exists(path):
        if not os.path.exists(OPTIMUM_PYTHON):
            sys.exit(f"{path} is missing, and exporting it needs optimum: python3 -m venv "
                     "build/optimum-venv && build/optimum-venv/bin/pip install optimum-onnx "
                     "onnxruntime")
        subprocess.run([OPTIMUM_PYTHON, os.path.join(ROOT, "test", "models", "export_decoders.py"),
                        "--out", model_dir, "--models", name], check=True)
    return path


def step_feed(names, ids, mask, past):
    feed = {"input_ids": ids, "attention_mask": mask, **past}
    if "position_ids" in names:
        feed["position_ids"] = (np.cumsum(mask, axis=1) - 1)[:, -ids.shape[1]:].astype(np.int64)
    return feed


def run_steps(run, names, pasts, shapes, prompt_ids, steps, next_ids=None):
    """A prefill of `prompt_ids` and `steps` decode steps by `run` (a feed
    to a dict of outputs), each step's present fed back as its past; the
    tokens are `next_ids` when given, else its own greedy choices. Returns
    each step's logits, milliseconds and tokens."""
    ids = prompt_ids
    mask = np.ones(ids.shape, np.int64)
    past = {n: np.zeros((1, shapes[n][1], 0, shapes[n][3]), np.float32) for n in pasts}
    logits, times, tokens = [], [], []
    for step in range(steps + 1):
        feed = step_feed(names, ids, mask, past)
        start = time.perf_counter()
        got = run(feed)
        times.append((time.perf_counter() - start) * 1000)
        logits.append(got["logits"])
        past = {n: got[p] for n, p in pasts.items()}
        ids = (next_ids[step] if next_ids is not None
               else got["logits"][:, -1:].argmax(-1).astype(np.int64))
        tokens.append(ids)
        mask = np.concatenate([mask, np.ones((1, 1), np.int64)], axis=1)
    return logits, times, tokens


def generate(artifact, path, threads, prompt, steps, rounds):
    """Prefill and `steps` decode steps by both, in turns of a whole
    generation each (the threads of one do not wait on the other's); returns
    each one's best prefill and median decode step in milliseconds, and the
    largest logit error."""
    reference = peers.onnxruntime_session(path, threads)
    session = artifact.session(threads=threads)
    names = [i.name for i in reference.get_inputs()]
    outputs = [o.name for o in reference.get_outputs()]
    shapes = {i.name: i.shape for i in reference.get_inputs()}
    pasts = {n: n.replace("past_key_values", "present") for n in names
             if n.startswith("past_key_values")}
    prompt_ids = np.random.default_rng(0).integers(0, 1000, (1, prompt)).astype(np.int64)
    best = {"kiln": [float("inf")] * 2, "onnxruntime": [float("inf")] * 2}
    worst = 0.0
    for _ in range(rounds):
        want, ort_ms, tokens = run_steps(lambda f: dict(zip(outputs, reference.run(None, f))),
                                         names, pasts, shapes, prompt_ids, steps)
        # kiln follows onnxruntime's tokens, so that every step compares.
        got, kiln_ms, _ = run_steps(session.run, names, pasts, shapes, prompt_ids, steps, tokens)
        for expected, actual in zip(want, got):
            scale = float(np.abs(expected).max())
            worst = max(worst, float(np.abs(actual - expected).max()) / scale)
        for name, times in (("kiln", kiln_ms), ("onnxruntime", ort_ms)):
            best[name][0] = min(best[name][0], times[0])
            best[name][1] = min(best[name][1], statistics.median(times[1:]))
    return best, worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="gpt2_small,llama_small")
    parser.add_argument("--model-dir", default=os.path.join(ROOT, "build", "decoders"))
    parser.add_argument("--kiln", default=models.KILN)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(args.model_dir, exist_ok=True)
    os.environ.setdefault("KILN_COMPILER", args.kiln)
    print(f"uptime: {os.getloadavg()[0]:.2f} load average; prefill of {args.prompt} tokens, "
          f"{args.steps} decode steps, batch 1")
    print("| model | threads | compile | prefill kiln / ort | decode step kiln / ort | ratio "
          "| kiln tokens/s | largest error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    failed = False
    for name in args.models.split(","):
        path = ensure_exported(name, args.model_dir)
        start = time.perf_counter()
        artifact = kiln.compile(path, output=os.path.join(args.model_dir, f"{name}-past.kiln"))
        seconds = time.perf_counter() - start
        for threads in [int(t) for t in args.threads.split(",")]:
            best, worst = generate(artifact, path, threads, args.prompt, args.steps, args.rounds)
            failed = failed or worst > 1e-3
            (kiln_prefill, kiln_step), (ort_prefill, ort_step) = best["kiln"], best["onnxruntime"]
            print(f"| {name} | {threads} | {seconds:.1f} s | {kiln_prefill:.1f} ms / "
                  f"{ort_prefill:.1f} ms | {kiln_step:.2f} ms / {ort_step:.2f} ms | "
                  f"{kiln_step / ort_step:.2f}x | {1000 / kiln_step:.1f} | {worst:.1e} |",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
