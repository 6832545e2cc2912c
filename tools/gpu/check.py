#!/usr/bin/env python3
"""The GPU check: runs what tools/gpu/prepare.py made on a GPU, checks every
result, then times kiln against cuBLAS through PyTorch.

    tools/gpu/check.py [--bundle gpu-check] [--device cuda:0] [--no-bench]

Correctness:
  - every conformance test, at the ONNX backend's tolerances (rtol 1e-3,
    atol 1e-7, or test/conformance/tolerances.txt's);
  - conv_relu in each precision against kiln's host result in the same
    precision (the host rounds operands exactly as tensor cores read them,
    so only the order of fp32 additions differs: 1e-4 of the largest value,
    2e-3 for fp8, whose tensor cores may add with fewer bits)
    and against onnxruntime's fp32 result at that precision's tolerance.

Speed (needs PyTorch with CUDA): each NxN GEMM's kiln run against
torch.matmul (cuBLAS; TF32 allowed for tf32, bf16 operands for bf16) and
torch._scaled_mm for fp8, in TFLOP/s, after warm-up, both timed by CUDA
events around the kernels (kiln_session_kernel_milliseconds); kiln's whole
runs, with the copies of inputs and result its API makes, are shown too.

Prints a report, writes it as Markdown to --report, and exits 1 on any
wrong result. The artifacts hold host code too: `--device host --no-bench`
runs the same checks on a build machine.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "conformance"))
from kiln_runtime import KilnError, Runtime  # noqa: E402
import run as conformance  # noqa: E402  (as_float, load_tolerances)

# Against onnxruntime's fp32 result, relative to the largest value.
PRECISION_TOLERANCE = {"fp32": 1e-5, "tf32": 5e-3, "fp16": 5e-3, "bf16": 3e-2, "fp8": 0.2}
# Against kiln's host result in the same precision: only the order of the
# fp32 additions differs, except that fp8 tensor cores may add with fewer
# bits.
HOST_TOLERANCE = {"fp8": 2e-3}


def check_conformance(runtime, bundle, names, device, report):
    tolerances = conformance.load_tolerances()
    failures = []
    for name in names:
        data = np.load(os.path.join(bundle, "conformance", name + ".npz"))
        try:
            session = runtime.load(os.path.join(bundle, "conformance", name + ".kiln")).session(device)
            outputs = session.run({k[3:]: data[k] for k in data.files if k.startswith("in:")})
        except KilnError as error:
            failures.append(f"{name}: {error}")
            continue
        rtol, atol = tolerances.get(name, (conformance.RTOL, conformance.ATOL))
        for key in (k for k in data.files if k.startswith("out:")):
            output, expected = key[4:], data[key]
            actual = outputs[output]
            bfloat16 = "bf16:" + output in data.files
            if expected.dtype == np.bool_ or (np.issubdtype(expected.dtype, np.integer)
                                              and not bfloat16):
                if not np.array_equal(actual, expected):
                    failures.append(f"{name}: output {output} differs")
                continue
            got = conformance.as_float(actual, bfloat16)
            want = conformance.as_float(expected, bfloat16)
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                failures.append(f"{name}: output {output}: max abs error "
                                f"{np.nanmax(np.abs(got - want)):.3g}")
    report.append(f"- Conformance on {device}: {len(names) - len(failures)} of {len(names)} "
                  "backend tests pass.")
    report += [f"  - FAILED {failure}" for failure in failures]
    return not failures


def check_precision(runtime, bundle, precisions, device, report):
    ok = True
    report.append(f"- conv_relu per precision on {device} (largest error relative to the "
                  "largest value):")
    for precision in precisions:
        data = np.load(os.path.join(bundle, "precision", precision + ".npz"))
        session = runtime.load(os.path.join(bundle, "precision", precision + ".kiln")).session(device)
        actual = session.run({"input": data["input"]})["output"].astype(np.float64)
        scale = np.abs(data["reference"]).max()
        to_host = np.abs(actual - data["host"]).max() / scale
        to_reference = np.abs(actual - data["reference"]).max() / scale
        good = (to_host <= HOST_TOLERANCE.get(precision, 1e-4)
                and to_reference <= PRECISION_TOLERANCE[precision])
        ok &= bool(good)
        report.append(f"  - {precision}: {to_host:.2e} against kiln on the host, {to_reference:.2e} "
                      f"against onnxruntime fp32 (allowed {PRECISION_TOLERANCE[precision]:g})"
                      + ("" if good else " FAILED"))
    return ok


def time_kiln(session, inputs, budget):
    """Mean seconds of the kernels per run (the GPU's own timing), and of
    whole runs with their copies, after a warm-up run, within about
    `budget` seconds."""
    session.run(inputs)
    runs, kernels = [], []
    while not runs or (sum(runs) < budget and len(runs) < 20):
        start = time.perf_counter()
        session.run(inputs)
        runs.append(time.perf_counter() - start)
        kernels.append(session.kernel_milliseconds() / 1000)
    return sum(kernels) / len(kernels), sum(runs) / len(runs)


def time_torch(torch, function, budget=2.0):
    for _ in range(3):
        function()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    runs = 0
    start.record()
    begin = time.perf_counter()
    while runs < 10 or (time.perf_counter() - begin < budget and runs < 200):
        function()
        runs += 1
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1000 / runs


def bench_gemm(runtime, bundle, gemms, device, report):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = True
    report.append("")
    report.append("| GEMM | precision | kiln TFLOP/s | kiln with copies | PyTorch TFLOP/s | "
                  "kiln / PyTorch | max rel. error |")
    report.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for gemm in gemms:
        n, precision = gemm["n"], gemm["precision"]
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        session = runtime.load(os.path.join(bundle, "gemm", gemm["file"])).session(device)
        seconds, with_copies = time_kiln(session, {"a": a, "b": b}, budget=10.0)
        result = session.run({"a": a, "b": b})["c"]
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        if precision == "tf32":
            expected = ta @ tb
            torch_seconds = time_torch(torch, lambda: ta @ tb)
        elif precision == "bf16":
            ha, hb = ta.bfloat16(), tb.bfloat16()
            expected = (ha @ hb).float()
            torch_seconds = time_torch(torch, lambda: ha @ hb)
        else:
            scale_a = torch.tensor(gemm["scales"]["a"] / 448.0, device="cuda")
            scale_b = torch.tensor(gemm["scales"]["b"] / 448.0, device="cuda")
            qa = (ta / scale_a).to(torch.float8_e4m3fn)
            qb = (tb / scale_b).to(torch.float8_e4m3fn).t().contiguous().t()
            run = lambda: torch._scaled_mm(qa, qb, scale_a=scale_a, scale_b=scale_b,  # noqa: E731
                                           out_dtype=torch.float32)
            expected = run()
            torch_seconds = time_torch(torch, run)
        expected = expected.float().cpu().numpy()
        error = np.abs(result - expected).max() / np.abs(expected).max()
        flops = 2.0 * n ** 3
        report.append(f"| {n}^3 | {precision} | {flops / seconds / 1e12:.3f} | "
                      f"{flops / with_copies / 1e12:.3f} | {flops / torch_seconds / 1e12:.1f} | "
                      f"{torch_seconds / seconds:.4f} | {error:.2e} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", default=os.path.join(ROOT, "gpu-check"))
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--no-bench", action="store_true", help="check results only")
    parser.add_argument("--report", help="also write the report here (Markdown)")
    args = parser.parse_args()

    manifest = json.load(open(os.path.join(args.bundle, "manifest.json")))
    runtime = Runtime(os.path.join(args.bundle, "libkiln_runtime.so"))
    report = [f"GPU check on {args.device}, code for {manifest['target']}"]
    ok = check_conformance(runtime, args.bundle, manifest["conformance"], args.device, report)
    ok &= check_precision(runtime, args.bundle, manifest["precision"], args.device, report)
    for name, reason in manifest["models_left_out"].items():
        report.append(f"- {name} left out: {reason}")
    if not args.no_bench:
        bench_gemm(runtime, args.bundle, manifest["gemm"], args.device, report)
    text = "\n".join(report)
    print(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
