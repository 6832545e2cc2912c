#!/usr/bin/env python3
"""Prepares the GPU check on a build machine (one with kiln, no GPU needed).

    tools/gpu/prepare.py [--kiln build/bin/kiln] [--runtime build/lib/libkiln_runtime.so]
                         [--out gpu-check] [--target sm_90] [--jobs 2] [--no-models]

Writes into OUT (git ignores it) everything tools/gpu/check.py needs on the
GPU machine, which has no LLVM and no network:

  libkiln_runtime.so      the runtime, which is all of kiln that runs there
  conformance/NAME.kiln   each ONNX backend test that passes on the host
  conformance/NAME.npz    (test/conformance/passing.txt), compiled in fp32,
                          with its first data set
  conformance/NAME.tf32.kiln  those with a Conv, Gemm or MatMul again in
                          tf32, where the GPU runs them on tensor cores
                          with what surrounds them fused; the .npz holds
                          the host's tf32 result, which rounds alike
  precision/P.kiln        conv_relu in each precision P (fp32, tf32, fp16,
  precision/P.npz         bf16, fp8), with its input, kiln's host result in
                          the same precision (bit-exact rounding, so the GPU
                          must agree closely) and onnxruntime's fp32 result
  gemm/N_P.kiln           an NxN MatMul of two inputs, N 4096 and 8192, P
                          tf32, bf16 and fp8, for the throughput comparison
  models/resnet50_b1.kiln.xz   the generated ResNet-50 for the target (tf32,
  models/resnet50_b64.kiln.xz  NHWC: the GPU defaults) at batch 1 and 64,
                          compressed (tf32's zero low bits halve the
                          weights), batch 64 without its weights, which are
                          batch 1's: check.py puts them back, and regenerates
                          the ONNX model (same seed) for onnxruntime and
                          PyTorch
  manifest.json           what is there, and what was left out and why

For --target sm_90 (the default), the tensor-core artifacts (the tf32
conformance tests, the precisions and the GEMMs) come twice: NAME.kiln for
sm_90 (mma.sync) and NAME.wgmma.kiln for sm_90a (wgmma), so that the GPU
check runs both kernels (manifest.json's "variants").

Every artifact but the models' holds host code beside the target's, so
`check.py --device host --no-bench` runs the same checks here (CTest does,
as gpu-check-host); `--target host` makes a bundle whose models run on the
host too.

The GPU machine takes 64 MiB of files in all, the source tree among them:
the script fails if OUT holds more than 60. The generated BERT encoder is left out for that reason (its fp32
weights, even with two layers, are about 150 MB): manifest.json says so,
and check.py reports it. --no-models leaves ResNet-50 out too (CTest does,
to keep CI short).
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
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "conformance"))
import run as conformance  # noqa: E402  (test/conformance/run.py)
from kiln_runtime import Runtime  # noqa: E402

LIMIT = 64 << 20
PRECISIONS = ["fp32", "tf32", "fp16", "bf16", "fp8"]
GEMM_SIZES = [4096, 8192]
GEMM_PRECISIONS = ["tf32", "bf16", "fp8"]
SKIPPED = {
    "bert": "its fp32 weights (about 150 MB with 2 layers, 60 MB compressed) do not fit "
            "beside ResNet-50 in the 64 MiB the GPU machine takes",
}
MODEL_BATCHES = [1, 64]
# The architecture-specific target whose tensor-core kernels differ: sm_90a
# multiplies with wgmma where sm_90 has mma.sync.
SPECIFIC = {"sm_90": ("sm_90a", "wgmma")}


def variants(target):
    """The tensor-core artifacts' variants: a file suffix, the target, and
    the instruction that multiplies."""
    made = [{"suffix": "", "target": target,
             "kernel": "host" if target == "host" else "mma.sync"}]
    if target in SPECIFIC:
        specific, kernel = SPECIFIC[target]
        made.append({"suffix": "." + kernel, "target": specific, "kernel": kernel})
    return made


def with_host(target):
    """The --target list of artifacts that the host can run too."""
    return target if target == "host" else "host," + target


def kiln_compile(kiln, model, out, *flags):
    done = subprocess.run([kiln, "compile", model, "-o", out, *flags],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"kiln compile {os.path.basename(model)} {' '.join(flags)}: "
                           f"{conformance.first_line(done.stderr)}")


PRODUCTS = {"Conv", "Gemm", "MatMul"}


def prepare_conformance(args, out):
    """Each passing backend test, compiled for the target, with its data;
    those with a product in tf32 too, with the host's result."""
    runtime = Runtime(os.path.realpath(args.runtime))
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
                         "--target", with_host(args.target), "--precision", "fp32")
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
        if PRODUCTS & {node.op_type for node in model.graph.node}:
            tf32 = os.path.join(out, name + ".tf32.kiln")
            try:
                for variant in variants(args.target):
                    kiln_compile(args.kiln, model_path,
                                 os.path.join(out, name + ".tf32" + variant["suffix"] + ".kiln"),
                                 "--target", with_host(variant["target"]), "--precision", "tf32")
                session = runtime.load(tf32).session("host")
                results = session.run({k[3:]: arrays[k] for k in arrays if k.startswith("in:")})
            except RuntimeError as error:  # kiln compile's, or the runtime's KilnError
                return name, f"tf32: {error}"
            for output, value in results.items():
                arrays["tf32:" + output] = value
        np.savez(os.path.join(out, name + ".npz"), **arrays)
        return name, None

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, names))
    failed = {name: reason for name, reason in results if reason}
    passed = sorted(name for name, reason in results if not reason)
    tf32 = [name for name in passed if os.path.exists(os.path.join(out, name + ".tf32.kiln"))]
    return passed, tf32, failed


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
        for variant in variants(args.target):
            kiln_compile(args.kiln, model, os.path.join(out, precision + variant["suffix"] + ".kiln"),
                         "--target", with_host(variant["target"]), *flags)
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
            for variant in variants(args.target):
                file = f"{n}_{precision}{variant['suffix']}.kiln"
                kiln_compile(args.kiln, path, os.path.join(out, file),
                             "--target", with_host(variant["target"]), *flags)
                made.append({"n": n, "precision": precision, "file": file,
                             "kernel": variant["kernel"],
                             "scales": {"a": 6.0, "b": 6.0} if precision == "fp8" else None})
    return made


def weights_offset(kiln, artifact):
    """Where the artifact's (one) weight block starts, as kiln inspect says."""
    listing = subprocess.run([kiln, "inspect", artifact], capture_output=True, text=True,
                             check=True).stdout
    offsets = {int(line.rsplit(" at ", 1)[1]) for line in listing.splitlines()
               if line.startswith("  weights: ")}
    if len(offsets) != 1:
        raise RuntimeError(f"{artifact}: expected one weight block, found {len(offsets)}")
    return offsets.pop()


def weights_digest(onnx_path):
    """SHA-256 of the model's initializers, in order: check.py regenerates
    the model and must get the same weights."""
    import hashlib

    from onnx import numpy_helper

    digest = hashlib.sha256()
    for tensor in onnx.load(onnx_path).graph.initializer:
        digest.update(tensor.name.encode())
        digest.update(np.ascontiguousarray(numpy_helper.to_array(tensor)).tobytes())
    return digest.hexdigest()


def prepare_models(args, out, work):
    """ResNet-50 at batch 1 (compressed) and 64 (without its weights)."""
    import lzma

    subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                    "--out", work, "--models", "resnet50"], check=True, capture_output=True)
    model = os.path.join(work, "resnet50.onnx")
    digest = weights_digest(model)
    os.makedirs(out, exist_ok=True)
    files = {}
    for batch in MODEL_BATCHES:
        path = os.path.join(work, f"resnet50_b{batch}.kiln")
        kiln_compile(args.kiln, model, path, "--target", args.target,
                     "--input-shape", f"input={batch}x3x224x224")
        files[batch] = (path, weights_offset(args.kiln, path))
    first, offset = files[MODEL_BATCHES[0]]
    weights = open(first, "rb").read()[offset:]
    entries = []
    for batch, (path, at) in files.items():
        data = open(path, "rb").read()
        name = f"resnet50_b{batch}.kiln"
        entry = {"model": "resnet50", "batch": batch, "input": "input",
                 "shape": [batch, 3, 224, 224], "size": len(data), "weights_digest": digest}
        if batch != MODEL_BATCHES[0]:
            if data[at:] != weights:
                raise RuntimeError(f"{name}: its weights differ from batch "
                                   f"{MODEL_BATCHES[0]}'s")
            data = data[:at]
            entry.update(weights_from=f"resnet50_b{MODEL_BATCHES[0]}.kiln", weights_at=at,
                         weights_from_at=offset)
        # xz on all cores where there is one; Python's lzma otherwise.
        if shutil.which("xz"):
            with open(os.path.join(out, name + ".xz"), "wb") as f:
                subprocess.run(["xz", "-T0", "-6", "-c"], input=data, stdout=f, check=True)
        else:
            with lzma.open(os.path.join(out, name + ".xz"), "wb", preset=6) as f:
                f.write(data)
        entry.update(file=name + ".xz", compressed=True)
        entries.append(entry)
    return entries


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
    parser.add_argument("--no-models", action="store_true", help="leave ResNet-50 out")
    args = parser.parse_args()

    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    shutil.copy(os.path.realpath(args.runtime), os.path.join(args.out, "libkiln_runtime.so"))
    with tempfile.TemporaryDirectory(prefix="kiln-gpu-check-") as work:
        passed, tf32, failed = prepare_conformance(args, os.path.join(args.out, "conformance"))
        precisions = prepare_precision(args, os.path.join(args.out, "precision"), work)
        gemms = prepare_gemm(args, os.path.join(args.out, "gemm"), work)
        models = [] if args.no_models else prepare_models(args, os.path.join(args.out, "models"),
                                                          work)
    left_out = dict(SKIPPED)
    if args.no_models:
        left_out["resnet50"] = "left out with --no-models"
    manifest = {"target": args.target, "variants": variants(args.target),
                "conformance": passed, "conformance_tf32": tf32,
                "conformance_not_compiled": failed, "precision": precisions, "gemm": gemms,
                "models": models, "models_left_out": left_out}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)

    size = size_of(args.out)
    print(f"{args.out}: {len(passed)} conformance tests ({len(tf32)} in tf32 too), "
          f"{len(precisions)} precisions, "
          f"{len(gemms)} GEMMs, {len(models)} model artifacts for {args.target}; "
          f"{size / (1 << 20):.1f} MiB")
    for name, reason in sorted(failed.items()):
        print(f"  not compiled: {name}: {reason}")
    for name, reason in left_out.items():
        print(f"  left out: {name}: {reason}")
    if size > LIMIT - (4 << 20):
        sys.exit(f"{args.out} holds {size / (1 << 20):.1f} MiB; with the source tree it must "
                 "stay under the GPU machine's 64 MiB")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
