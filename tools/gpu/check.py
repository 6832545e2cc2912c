#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU check: runs what tools/gpu/prepare.py made on a GPU, checks every
result, then times kiln against cuBLAS through PyTorch.

    tools/gpu/check.py [--bundle gpu-check/part1] [--device cuda:0|hip:0] [--no-bench]

Run once per part (part1: the kernels, MobileNetV2 and BERT; part2:
ResNet-50), each in one call of the GPU machine.

Correctness:
  - every conformance test, at the ONNX backend's tolerances (rtol 1e-3,
    atol 1e-7, or test/conformance/tolerances.txt's);
  - those with a Conv, Gemm or MatMul in tf32 too (tensor cores, with the
    kernels around the product fused) against kiln's host result in tf32,
    which rounds alike (TF32_TOLERANCE of the largest value: the fp32 sums
    are ordered differently);
  - conv_relu in each precision against kiln's host result in the same
    precision (the host rounds operands exactly as tensor cores read them,
    so only the order of fp32 additions differs: 1e-4 of the largest value,
    2e-3 for fp8, whose tensor cores may add with fewer bits)
    and against onnxruntime's fp32 result at that precision's tolerance;
  - each GEMM against PyTorch's in the same format (GEMM_TOLERANCE);
  - the tf32 conformance tests, the precisions and the GEMMs once per
    variant the bundle has: on an H200, sm_90's mma.sync kernels and
    sm_90a's wgmma ones;
  - the part's models at batch 1 and 64 in each variant (the artifacts
    rebuilt whole, the ONNX model regenerated with the same seed) against
    onnxruntime's fp32 result, at tf32's tolerance (1e-2 of the largest
    value); BERT also from one artifact of symbolic batch and sequence
    (1..64 and 1..128), one session run at 1x7, 3x64 and 64x128.

On an AMD GPU (a bundle prepared with --target gfx942, run with --device
hip:0) the same checks run on MFMA kernels, and PyTorch's ROCm build (which
names AMD GPUs cuda:N) stands in for CUDA's: rocBLAS and hipBLASLt for
cuBLAS. That path has not run on AMD hardware yet.

Speed (needs PyTorch with CUDA or ROCm): each NxN GEMM's kiln run against
torch.matmul (cuBLAS; TF32 allowed for tf32, bf16 operands for bf16) and
torch._scaled_mm for fp8, in TFLOP/s, after warm-up, both timed by CUDA
events around the kernels (kiln_session_kernel_milliseconds); kiln's whole
runs, with the copies of inputs and result its API makes, are shown too.
Each model at each batch against PyTorch eager and torch.compile (static
shapes) with the same weights, TF32 allowed as in kiln's default:
tools/gpu/torch_models.py runs the CNNs' graphs node by node, channels
last, and BERT as HuggingFace's BertModel.

Prints a report, writes it as Markdown to --report, and exits 1 on any
wrong result. The artifacts hold host code too: `--device host --no-bench`
runs the same checks on a build machine.
"""
import argparse
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "conformance"))
import bundle_data  # noqa: E402
import run as conformance  # noqa: E402  (as_float, load_tolerances)

# The kiln package, from the bundle (import_kiln).
kiln = None


def import_kiln(bundle, manifest):
    """Imports the kiln package the bundle carries (python/kiln, built on the
    build machine for its Python), the runtime being all of kiln that runs
    here."""
    global kiln
    sys.path.insert(0, os.path.join(bundle, "python"))
    try:
        import kiln as package
    except ImportError as error:
        sys.exit(f"the bundle's kiln package does not import here ({error}): it was built for "
                 f"Python {manifest.get('python', '?')}, this is "
                 f"{sys.version_info[0]}.{sys.version_info[1]}")
    kiln = package

# Against onnxruntime's fp32 result, relative to the largest value.
PRECISION_TOLERANCE = {"fp32": 1e-5, "tf32": 5e-3, "fp16": 5e-3, "bf16": 3e-2, "fp8": 0.2}
# Against kiln's host result in the same precision: only the order of the
# fp32 additions differs, except that fp8 tensor cores may add with fewer
# bits.
HOST_TOLERANCE = {"fp8": 2e-3}
TF32_TOLERANCE = 1e-4
# A GEMM against PyTorch's, relative to the largest value: the operands are
# rounded alike but for ties, and the sums are ordered differently.
GEMM_TOLERANCE = {"tf32": 1e-2, "bf16": 2e-2, "fp8": 0.1}


def relative_error(actual, expected, scale=None):
    """The largest error, relative to the largest value of `scale` (by
    default `expected`); 0 when both are empty or zero."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    largest = np.abs(expected if scale is None else scale).max(initial=0.0)
    return np.abs(actual - expected).max(initial=0.0) / max(largest, 1e-30)


def check_conformance(bundle, names, device, report):
    tolerances = conformance.load_tolerances()
    failures = []
    for name in names:
        data = np.load(os.path.join(bundle, "conformance", name + ".npz"))
        try:
            outputs = bundle_data.run(kiln, os.path.join(bundle, "conformance", name + ".kiln"),
                                      device, data)
        except kiln.Error as error:
            failures.append((name, str(error)))
            continue
        rtol, atol = tolerances.get(name, (conformance.RTOL, conformance.ATOL))
        for key in (k for k in data.files if k.startswith("out:")):
            output, expected = key[4:], data[key]
            actual = outputs[output]
            bfloat16 = "bf16:" + output in data.files
            if expected.dtype == np.bool_ or (np.issubdtype(expected.dtype, np.integer)
                                              and not bfloat16):
                if not np.array_equal(actual, expected):
                    failures.append((name, f"output {output} differs"))
                continue
            got = conformance.as_float(actual, bfloat16)
            want = conformance.as_float(expected, bfloat16)
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                failures.append((name, f"output {output}: max abs error "
                                       f"{np.nanmax(np.abs(got - want)):.3g}"))
    report.append(f"- Conformance on {device}: {passed(names, failures)} of {len(names)} "
                  "backend tests pass.")
    report += [f"  - FAILED {name}: {message}" for name, message in failures]
    return not failures


def passed(names, failures):
    """The tests with no failure: a test may fail in several outputs."""
    return len(names) - len({name for name, _ in failures})


def check_conformance_tf32(bundle, names, variant, device, report):
    failures = []
    for name in names:
        data = np.load(os.path.join(bundle, "conformance", name + ".npz"))
        try:
            outputs = bundle_data.run(
                kiln, os.path.join(bundle, "conformance", name + ".tf32" + variant["suffix"] + ".kiln"),
                device, data)
        except kiln.Error as error:
            failures.append((name, str(error)))
            continue
        for key in (k for k in data.files if k.startswith("tf32:")):
            output = key[5:]
            error = relative_error(outputs[output], data[key])
            if not error <= TF32_TOLERANCE:
                failures.append((name, f"output {output}: {error:.2e} of the largest value"))
    report.append(f"- Conformance in tf32 on {device}, code for {variant['target']} "
                  f"({variant['kernel']}): {passed(names, failures)} of {len(names)} tests "
                  "with products agree with kiln's host tf32 result.")
    report += [f"  - FAILED {name}: {message}" for name, message in failures]
    return not failures


def check_precision(bundle, precisions, variant, device, report):
    ok = True
    report.append(f"- conv_relu per precision on {device}, code for {variant['target']} "
                  f"({variant['kernel']}; largest error relative to the largest value):")
    for precision in precisions:
        data = np.load(os.path.join(bundle, "precision", precision + ".npz"))
        artifact = os.path.join(bundle, "precision", precision + variant["suffix"] + ".kiln")
        session = kiln.Model(artifact).session(device)
        actual = session.run({"input": data["input"]})["output"]
        to_host = relative_error(actual, data["host"], scale=data["reference"])
        to_reference = relative_error(actual, data["reference"])
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


def bench_gemm(bundle, gemms, device, report):
    import torch

    ok = True
    torch.backends.cuda.matmul.allow_tf32 = True
    report.append("")
    report.append("| GEMM | precision | kiln kernel | kiln TFLOP/s | kiln with copies | "
                  "PyTorch TFLOP/s | kiln / PyTorch | max rel. error |")
    report.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for gemm in gemms:
        n, precision = gemm["n"], gemm["precision"]
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        session = kiln.Model(os.path.join(bundle, "gemm", gemm["file"])).session(device)
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
            # MI300's E4M3 is FNUZ (largest value 240), NVIDIA's FN (448).
            fnuz = gemm.get("format") == "fp8-fnuz"
            dtype, largest = ((torch.float8_e4m3fnuz, 240.0) if fnuz
                              else (torch.float8_e4m3fn, 448.0))
            scale_a = torch.tensor(gemm["scales"]["a"] / largest, device="cuda")
            scale_b = torch.tensor(gemm["scales"]["b"] / largest, device="cuda")
            qa = (ta / scale_a).to(dtype)
            qb = (tb / scale_b).to(dtype).t().contiguous().t()
            run = lambda: torch._scaled_mm(qa, qb, scale_a=scale_a, scale_b=scale_b,  # noqa: E731
                                           out_dtype=torch.float32)
            expected = run()
            torch_seconds = time_torch(torch, run)
        expected = expected.float().cpu().numpy()
        error = relative_error(result, expected)
        flops = 2.0 * n ** 3
        good = bool(error <= GEMM_TOLERANCE[precision])
        ok &= good
        report.append(f"| {n}^3 | {gemm.get('format', precision)} | {gemm['kernel']} | "
                      f"{flops / seconds / 1e12:.3f} | "
                      f"{flops / with_copies / 1e12:.3f} | {flops / torch_seconds / 1e12:.1f} | "
                      f"{torch_seconds / seconds:.4f} | {error:.2e}{'' if good else ' FAILED'} |")
    return ok


def restore_models(bundle, models, work):
    """The model artifacts whole again, in `work`: {file name: path}."""
    data = {}
    for model in models:
        source = os.path.join(bundle, "models", model["file"])
        opener = lzma.open if model.get("compressed") else open
        with opener(source, "rb") as f:
            data[model["file"].removesuffix(".xz")] = f.read()
    paths = {}
    for model in models:
        name = model["file"].removesuffix(".xz")
        if "weights_from" in model:
            data[name] = data[name][:model["weights_at"]] + \
                data[model["weights_from"]][model["weights_from_at"]:]
        if len(data[name]) != model["size"]:
            raise RuntimeError(f"{name}: rebuilt to {len(data[name])} bytes, not {model['size']}")
        paths[name] = os.path.join(work, name)
        with open(paths[name], "wb") as f:
            f.write(data[name])
    return paths


def compare_model(session, inputs, want, what, report):
    """Runs `session` on `inputs` and reports, as `what`, its largest error
    against onnxruntime's result `want` at tf32's tolerance: whether it
    is within it."""
    got = next(iter(session.run(inputs).values())).copy()
    error = relative_error(got, want)
    good = bool(error <= 1e-2)
    report.append(f"- {what}: largest error {error:.2e} of the largest value against "
                  f"onnxruntime fp32 (allowed 1e-2)" + ("" if good else " FAILED"))
    return good


def check_symbolic(name, entry, paths, graph, reference, generate, device, report):
    """One artifact with a symbolic batch and sequence, run at each shape
    the entry names by one session, against onnxruntime."""
    ok = True
    session = kiln.Model(paths[entry["file"].removesuffix(".xz")]).session(device)
    for batch, sequence in entry["checked"]:
        inputs = generate.random_feed(graph, batch=batch, seq=sequence, seed=batch)
        ok &= compare_model(session, inputs, reference.run(None, inputs)[0],
                            f"{name} at {batch}x{sequence} from one symbolic artifact "
                            f"({entry['kernel']}) on {device}", report)
    return ok


def check_models(bundle, models, device, report, bench):
    """Each model against onnxruntime, then (with `bench`) against PyTorch
    eager and torch.compile: the ONNX model regenerated with the same seed,
    PyTorch's timed once per batch, kiln's once per variant."""
    import onnx
    import onnxruntime

    from prepare import weights_digest

    sys.path.insert(0, os.path.join(ROOT, "test", "models"))
    import generate

    ok = True
    rows, slowest = [], []
    with tempfile.TemporaryDirectory(prefix="kiln-gpu-models-") as work:
        paths = restore_models(bundle, models, work)
        for name in dict.fromkeys(model["model"] for model in models):
            entries = [model for model in models if model["model"] == name]
            subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                            "--out", work, "--models", name, *entries[0]["generate"]],
                           check=True, capture_output=True)
            onnx_path = os.path.join(work, name + ".onnx")
            if weights_digest(onnx_path) != entries[0]["weights_digest"]:
                raise RuntimeError(f"the regenerated {name} has other weights than the one "
                                   "compiled (another NumPy?): nothing to compare against")
            graph = onnx.load(onnx_path, load_external_data=False)
            reference = onnxruntime.InferenceSession(onnx_path,
                                                     providers=["CPUExecutionProvider"])
            for entry in (entry for entry in entries if entry["batch"] is None):
                ok &= check_symbolic(name, entry, paths, graph, reference, generate, device,
                                     report)
            for batch in dict.fromkeys(entry["batch"] for entry in entries
                                       if entry["batch"] is not None):
                inputs = generate.random_feed(graph, batch=batch, seq=entries[0]["sequence"],
                                              seed=batch)
                want = reference.run(None, inputs)[0]
                timings = []
                for entry in (entry for entry in entries if entry["batch"] == batch):
                    path = paths[entry["file"].removesuffix(".xz")]
                    session = kiln.Model(path).session(device)
                    ok &= compare_model(session, inputs, want,
                                        f"{name} batch {batch} ({entry['kernel']}) on {device}",
                                        report)
                    if bench:
                        timings.append((entry["kernel"], *time_kiln(session, inputs, budget=5.0)))
                    del session
                    if bench:
                        try:
                            slowest += slowest_kernels(path, device, inputs, entry,
                                                       batch)
                        except (kiln.Error, RuntimeError) as error:
                            report.append(f"- {name} batch {batch} ({entry['kernel']}): "
                                          f"profile FAILED: {error}")
                            ok = False
                if timings:
                    # PyTorch failing loses its columns, not kiln's figures.
                    try:
                        eager, compiled = time_pytorch(name, onnx_path, inputs, device)
                    except Exception as error:  # noqa: BLE001
                        report.append(f"- PyTorch on {name} batch {batch} failed: "
                                      f"{type(error).__name__}: {error}")
                        eager = compiled = float("nan")
                    # The host has no kernel timer: its time is 0.
                    rows += [f"| {name} | {batch} | {kernel} | {kernels * 1e3:.3f} | "
                             f"{with_copies * 1e3:.3f} | {eager * 1e3:.3f} | "
                             f"{compiled * 1e3:.3f} | "
                             f"{compiled / kernels if kernels else float('nan'):.3f} |"
                             for kernel, kernels, with_copies in timings]
    if rows:
        report.append("")
        report.append("| model | batch | kiln kernel | kiln ms | kiln with copies ms | "
                      "PyTorch eager ms | torch.compile ms | torch.compile / kiln |")
        report.append("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        report += rows
    if slowest:
        report.append("")
        report.append("Slowest kernels (each kernel timed alone, launched one by one):")
        report += slowest
    return ok


def on_gpu(device):
    """Whether kiln's `device` is a GPU: cuda:N or hip:N."""
    return device.startswith(("cuda", "hip"))


def torch_device(device):
    """PyTorch's name for kiln's `device`: its CUDA and ROCm builds both call
    the GPUs cuda:N."""
    if not on_gpu(device):
        return "cpu"
    return "cuda" + device[device.index(":"):] if ":" in device else "cuda"


def slowest_kernels(path, device, inputs, entry, batch, count=5):
    """Report lines for the `count` slowest kernels of the model's plan,
    from a profiled session's runs (none on the host, which has no kernels
    to time)."""
    if not on_gpu(device):
        return []
    session = kiln.Model(path).session(device, graph=False, profile=True)
    if session.target != entry["target"]:
        raise RuntimeError(f"{entry['file']} ran its code for {session.target}, "
                           f"not {entry['target']}")
    session.run(inputs)
    runs = 3
    total = [0.0] * len(entry["kernels"])
    for _ in range(runs):
        session.run(inputs)
        times = session.kernel_profile()
        if len(times) != len(total):
            raise RuntimeError(f"{entry['file']}: {len(times)} kernels timed, "
                               f"{len(total)} listed")
        total = [t + ms / runs for t, ms in zip(total, times)]
    whole = sum(total) or 1.0
    lines = [f"- {entry['model']} batch {batch} ({entry['kernel']}), {sum(total):.3f} ms "
             f"in {len(total)} kernels:"]
    for i in sorted(range(len(total)), key=lambda i: -total[i])[:count]:
        kernel = entry["kernels"][i]
        lines.append(f"  - #{i} {kernel['kind']} {kernel['precision']}: {total[i]:.3f} ms "
                     f"({100 * total[i] / whole:.0f}%) {kernel['nodes']}")
    return lines


def time_pytorch(name, onnx_path, inputs, device):
    """Seconds per run of the model in PyTorch eager and torch.compile (one
    static shape, as kiln's) on kiln's `device` (its GPU, or the CPU),
    TF32 allowed as in kiln's default."""
    import torch

    from torch_models import module

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    net, feed = module(torch, name, onnx_path, torch_device(device))
    args = feed(inputs)
    with torch.no_grad():
        eager = time_torch(torch, lambda: net(*args))
        compiled_net = torch.compile(net, dynamic=False)
        compiled = time_torch(torch, lambda: compiled_net(*args))
    return eager, compiled


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", default=os.path.join(ROOT, "gpu-check", "part1"))
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--no-bench", action="store_true", help="check results only")
    parser.add_argument("--report", help="also write the report here (Markdown)")
    args = parser.parse_args()

    manifest = json.load(open(os.path.join(args.bundle, "manifest.json")))
    import_kiln(args.bundle, manifest)
    report = [f"GPU check on {args.device}, code for {manifest['target']}"]
    gpu = on_gpu(args.device)
    models = manifest.get("models", [])
    # The first part holds the kernels' checks, and each part some models.
    steps = []
    if "conformance" in manifest:
        steps.append(("conformance", lambda: check_conformance(
            args.bundle, manifest["conformance"], args.device, report)))
        # The tensor-core artifacts come once per variant (mma.sync, wgmma).
        for variant in manifest["variants"]:
            steps.append((f"conformance in tf32 ({variant['kernel']})",
                          lambda variant=variant: check_conformance_tf32(
                              args.bundle, manifest["conformance_tf32"], variant,
                              args.device, report)))
            steps.append((f"precision ({variant['kernel']})",
                          lambda variant=variant: check_precision(
                              args.bundle, manifest["precision"], variant,
                              args.device, report)))
    if not args.no_bench and gpu and "gemm" in manifest:
        steps.append(("GEMMs", lambda: bench_gemm(args.bundle, manifest["gemm"],
                                                  args.device, report)))
    if models and (gpu or manifest["target"] == "host"):
        steps.append(("models", lambda: check_models(args.bundle, models, args.device,
                                                     report, gpu and not args.no_bench)))
    elif models:
        report.append(f"- models: their artifacts hold code for {manifest['target']} only")
    # A step that breaks is reported, and the others still run: the GPU
    # machine's minutes are few. Each step's lines are printed as it ends,
    # with the seconds it took, so a run cut short still says how far it
    # got and the next one can be planned to fit.
    ok, printed = True, 0
    for name, step in steps:
        start = time.perf_counter()
        try:
            ok &= step()
        except Exception as error:  # noqa: BLE001
            report.append(f"- {name} FAILED: {type(error).__name__}: {error}")
            ok = False
        report.append(f"- ({name}: {time.perf_counter() - start:.1f} s)")
        print("\n".join(report[printed:]), flush=True)
        printed = len(report)
    for name, reason in manifest.get("models_left_out", {}).items():
        report.append(f"- {name} left out: {reason}")
    print("\n".join(report[printed:]), flush=True)
    text = "\n".join(report)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
