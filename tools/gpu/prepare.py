#!/usr/bin/env python3
"""Prepares the GPU check on a build machine (one with kiln, no GPU needed).

    tools/gpu/prepare.py [--kiln build/bin/kiln] [--runtime build/lib/libkiln_runtime.so]
                         [--out gpu-check] [--target sm_90] [--jobs 2]

Writes into OUT (git ignores it) everything tools/gpu/check.py needs on the
GPU machine, which has no LLVM and no network:

  libkiln_runtime.so      the runtime, which is all of kiln that runs there
  conformance/NAME.kiln   each ONNX backend test that passes on the host
  conformance/NAME.npz    (test/conformance/passing.txt), compiled in fp32,
                          with its first data set
  precision/P.kiln        conv_relu in each precision P (fp32, tf32, fp16,
  precision/P.npz         bf16, fp8), with its input, kiln's host result in
                          the same precision (bit-exact rounding, so the GPU
                          must agree closely) and onnxruntime's fp32 result
  gemm/N_P.kiln           an NxN MatMul of two inputs, N 4096 and 8192, P
                          tf32, bf16 and fp8, for the throughput comparison
  manifest.json           what is there, and what was left out and why

Every artifact holds host code beside the target's, so `check.py --device
host --no-bench` runs the same checks here (CTest does, as gpu-check-host).

The GPU machine takes 64 MiB of files in all: the script stops if OUT would
hold more. The generated ResNet-50 and BERT models are left out for that
reason (their fp32 weights alone are about 100 and 150 MB): manifest.json
says so, and check.py reports it.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "conformance"))
import run as conformance  # noqa: E402  (test/conformance/run.py)

LIMIT = 64 << 20
PRECISIONS = ["fp32", "tf32", "fp16", "bf16", "fp8"]
GEMM_SIZES = [4096, 8192]
GEMM_PRECISIONS = ["tf32", "bf16", "fp8"]
SKIPPED = {
    "resnet50": "its fp32 weights (about 100 MB) exceed the 64 MiB the GPU machine takes",
    "bert": "its fp32 weights (about 150 MB with 2 layers) exceed the 64 MiB the GPU machine takes",
}


def kiln_compile(kiln, model, out, *flags):
    done = subprocess.run([kiln, "compile", model, "-o", out, *flags],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"kiln compile {os.path.basename(model)} {' '.join(flags)}: "
                           f"{conformance.first_line(done.stderr)}")


def prepare_conformance(args, out):
    """Each passing backend test, compiled for the target, with its data."""
    names = [l.strip() for l in open(os.path.join(ROOT, "test", "conformance", "passing.txt"))
             if l.strip() and not l.startswith("#")]
    directories = {}
    for category in conformance.CATEGORIES:
        for directory in glob.glob(os.path.join(args.data, category, "*")):
            directories[os.path.basename(directory)] = directory
    os.makedirs(out, exist_ok=True)

    def one(name):
        directory = directories.get(name)
        if directory is None:
            return name, "not in the backend test data"
        model_path = os.path.join(directory, "model.onnx")
        try:
            kiln_compile(args.kiln, model_path, os.path.join(out, name + ".kiln"),
                         "--target", "host," + args.target, "--precision", "fp32")
        except RuntimeError as error:
            return name, str(error)
        model = onnx.load(model_path, load_external_data=False)
        initializers = {t.name for t in model.graph.initializer}
        inputs = [v.name for v in model.graph.input if v.name not in initializers]
        data_set = sorted(glob.glob(os.path.join(directory, "test_data_set_*")))[0]
        arrays = {}
        for i, input_name in enumerate(inputs):
            arrays["in:" + input_name] = conformance.read_tensor(
                os.path.join(data_set, f"input_{i}.pb"))
        for i, output in enumerate(model.graph.output):
            arrays["out:" + output.name] = conformance.read_tensor(
                os.path.join(data_set, f"output_{i}.pb"))
            if output.type.tensor_type.elem_type == TensorProto.BFLOAT16:
                arrays["bf16:" + output.name] = np.array(True)
        np.savez(os.path.join(out, name + ".npz"), **arrays)
        return name, None

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, names))
    failed = {name: reason for name, reason in results if reason}
    return sorted(name for name, reason in results if not reason), failed


def prepare_precision(args, out, work):
    """conv_relu in every precision, with host and onnxruntime results."""
    import onnxruntime as ort

    subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                    "--out", work, "--models", "conv_relu"], check=True, capture_output=True)
    model = os.path.join(work, "conv_relu.onnx")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 32, 32), dtype=np.float32)
    samples = os.path.join(work, "samples")
    os.makedirs(samples)
    np.save(os.path.join(samples, "input.npy"), x)
    scales = os.path.join(work, "scales.json")
    subprocess.run([args.kiln, "calibrate", model, "--inputs", samples, "-o", scales],
                   check=True, capture_output=True)
    reference = ort.InferenceSession(model).run(None, {"input": x})[0]
    os.makedirs(out, exist_ok=True)
    for precision in PRECISIONS:
        flags = ["--precision", precision]
        if precision == "fp8":
            flags += ["--calibration", scales]
        artifact = os.path.join(out, precision + ".kiln")
        kiln_compile(args.kiln, model, artifact, "--target", "host," + args.target, *flags)
        # The host plan runs NCHW, the GPU's NHWC; both round alike.
        result = os.path.join(work, precision + "_out")
        subprocess.run([args.kiln, "run", artifact, "--input", "input=" + os.path.join(
            samples, "input.npy"), "--output-dir", result], check=True, capture_output=True)
        np.savez(os.path.join(out, precision + ".npz"), input=x,
                 host=np.load(os.path.join(result, "output.npy")), reference=reference)
    return PRECISIONS


def prepare_gemm(args, out, work):
    """NxN MatMuls of two inputs: nothing but the product to time."""
    os.makedirs(out, exist_ok=True)
    made = []
    for n in GEMM_SIZES:
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["a", "b"], ["c"], name="matmul")], f"gemm{n}",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n]),
             helper.make_tensor_value_info("b", TensorProto.FLOAT, [n, n])],
            [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        path = os.path.join(work, f"gemm{n}.onnx")
        onnx.save(model, path)
        # Inputs are N(0, 1): fp8's scales map 6 (past any sample's
        # maximum at these sizes) to e4m3's 448.
        scales = os.path.join(work, "gemm_scales.json")
        with open(scales, "w") as f:
            json.dump({"tensors": {"a": 6.0, "b": 6.0}}, f)
        for precision in GEMM_PRECISIONS:
            flags = ["--precision", precision]
            if precision == "fp8":
                flags += ["--calibration", scales]
            kiln_compile(args.kiln, path, os.path.join(out, f"{n}_{precision}.kiln"),
                         "--target", "host," + args.target, *flags)
            made.append({"n": n, "precision": precision, "file": f"{n}_{precision}.kiln",
                         "scales": {"a": 6.0, "b": 6.0} if precision == "fp8" else None})
    return made


def size_of(directory):
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(directory) for f in files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--runtime", default=os.path.join(ROOT, "build", "lib", "libkiln_runtime.so"))
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--out", default=os.path.join(ROOT, "gpu-check"))
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    shutil.copy(os.path.realpath(args.runtime), os.path.join(args.out, "libkiln_runtime.so"))
    with tempfile.TemporaryDirectory(prefix="kiln-gpu-check-") as work:
        passed, failed = prepare_conformance(args, os.path.join(args.out, "conformance"))
        precisions = prepare_precision(args, os.path.join(args.out, "precision"), work)
        gemms = prepare_gemm(args, os.path.join(args.out, "gemm"), work)
    manifest = {"target": args.target, "conformance": passed,
                "conformance_not_compiled": failed, "precision": precisions, "gemm": gemms,
                "models_left_out": SKIPPED}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)

    size = size_of(args.out)
    print(f"{args.out}: {len(passed)} conformance tests, {len(precisions)} precisions, "
          f"{len(gemms)} GEMMs for {args.target}; {size / (1 << 20):.1f} MiB")
    for name, reason in sorted(failed.items()):
        print(f"  not compiled: {name}: {reason}")
    for name, reason in SKIPPED.items():
        print(f"  left out: {name}: {reason}")
    if size > LIMIT - (4 << 20):
        sys.exit(f"{args.out} holds {size / (1 << 20):.1f} MiB; with the source tree it must "
                 "stay under the GPU machine's 64 MiB")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
