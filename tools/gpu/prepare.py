#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Prepares the GPU check on a build machine (one with kiln, no GPU needed).

    build/venv/bin/python tools/gpu/prepare.py [--kiln build/bin/kiln] [--out gpu-check]
                                               [--target sm_90] [--jobs 2] [--no-models]
                                               [--conformance-every N]

Writes into OUT (git ignores it) everything tools/gpu/check.py needs on the
GPU machine, which has no LLVM and no network. That machine takes 64 MiB a
call, the source tree among them, so the check comes in two parts, each
under 60 MiB and run by one call: OUT/part1 and OUT/part2. Each part holds

  python/kiln/            the kiln Python package (tools/python-package.sh
                          installs it into build/venv, whose Python runs
                          this): its runtime is all of kiln that runs there
  manifest.json           what the part holds

and part1 the kernels' checks:

  conformance/NAME.kiln   each ONNX backend test that passes on the host
  conformance/NAME.npz    (test/conformance/passing.txt), compiled in fp32,
                          with its first data set (the inputs kiln must
                          know when compiling fixed by --input-value, as
                          run.py fixes them)
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

and the generated models (test/models/generate.py), MobileNetV2 and the
BERT encoder in part1, ResNet-50 in part2:

  models/M_bB.kiln.xz     model M for the target (tf32, NHWC: the GPU
                          defaults) at batch B, 1 and 64, compressed (tf32's
                          zero low bits halve the weights). Only batch 1's
                          artifact holds the weights; the others travel
                          without them, and check.py puts them back. The
                          check regenerates the ONNX model (same seed) for
                          onnxruntime and PyTorch.

For an AMD chip (--target gfx942, for an MI300), the same bundle with code
for it: the check then runs with --device hip:0, against PyTorch's ROCm
build (docs/amd.md; not yet run on AMD hardware). Its fp8 artifacts are
compiled with --precision fp8-fnuz (MI300's E4M3FNUZ), so that their host
plans round as the GPU's do.

For --target sm_90 (the default), every tensor-core artifact (the tf32
conformance tests, the precisions, the GEMMs and the models) comes twice:
NAME.kiln for sm_90 (mma.sync) and NAME.wgmma.kiln for sm_90a (wgmma), so
that the GPU check runs both kernels (manifest.json's "variants").

The kernels' artifacts hold host code beside the target's, so
`check.py --device host --no-bench` runs the same checks here (CTest does,
as gpu-check-host, with --no-models to keep CI short); `--target host`
makes a bundle whose models run on the host too (and may exceed 60 MiB: it
does not travel).
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
import bundle_data  # noqa: E402
import kiln  # noqa: E402  (the Python package: run this with build/venv's python)
import run as conformance  # noqa: E402  (test/conformance/run.py)

LIMIT = 64 << 20
PRECISIONS = ["fp32", "tf32", "fp16", "bf16", "fp8"]
GEMM_SIZES = [4096, 8192]
GEMM_PRECISIONS = ["tf32", "bf16", "fp8"]
MODEL_BATCHES = [1, 64]
# The generated models: generate.py's flags, and the sequence length. BERT
# is the encoder with 2 layers and a 1024-word vocabulary: the work is
# BERT-base's (a gather of the batch's rows from the table, then the
# layers), but the full table's 94 MB would not travel.
MODELS = {
    "resnet50": {"generate": []},
    "mobilenetv2": {"generate": []},
    "bert": {"generate": ["--layers", "2", "--vocab", "1024"], "sequence": 128,
             # Also one artifact for every batch and sequence in these
             # ranges (tensor-core products at a run-time row count),
             # checked at each (batch, sequence) given.
             "symbolic": {"batch": "1..64", "sequence": "1..128",
                          "checked": [[1, 7], [3, 64], [64, 128]]}},
}
# The GPU machine takes 64 MiB a call, so the check comes in two parts, one
# call each: the kernels' checks with MobileNetV2 and BERT, and ResNet-50,
# whose weights alone are 45 MB compressed.
PARTS = {
    "part1": {"kernels": True, "models": ["mobilenetv2", "bert"]},
    "part2": {"kernels": False, "models": ["resnet50"]},
}
# The architecture-specific target whose tensor-core kernels differ: sm_90a
# multiplies with wgmma where sm_90 has mma.sync.
SPECIFIC = {"sm_90": ("sm_90a", "wgmma")}


def variants(target):
    """The matrix-unit artifacts' variants: a file suffix, the target, and
    the instruction that multiplies."""
    kernel = "host" if target == "host" else "mfma" if target.startswith("gfx") else "mma.sync"
    made = [{"suffix": "", "target": target, "kernel": kernel}]
    if target in SPECIFIC:
        specific, kernel = SPECIFIC[target]
        made.append({"suffix": "." + kernel, "target": specific, "kernel": kernel})
    return made


def fp8_format(target):
    """The E4M3 that `--precision fp8` means on `target` (AMD's CDNA3 reads
    FNUZ), named explicitly so that the artifact's host plan rounds alike."""
    return "fp8-fnuz" if target in ("gfx940", "gfx941", "gfx942") else "fp8"


def with_host(target):
    """The --target list of artifacts that the host can run too."""
    return target if target == "host" else "host," + target


def kiln_compile(kiln, model, out, *flags):
    done = subprocess.run([kiln, "compile", model, "-o", out, *flags],
                          capture_output=True, text=True)
    if done.returncode != 0:
        error = RuntimeError(f"kiln compile {os.path.basename(model)} {' '.join(flags)}: "
                             f"{conformance.first_line(done.stderr)}")
        error.stderr = done.stderr
        raise error


PRODUCTS = {"Conv", "Gemm", "MatMul"}


def prepare_conformance(args, out):
    """Each passing backend test, compiled for the target, with its data;
    those with a product in tf32 too, with the host's result."""
    names = [l.strip() for l in open(os.path.join(ROOT, "test", "conformance", "passing.txt"))
             if l.strip() and not l.startswith("#")]
    names = names[::args.conformance_every]
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
        model = onnx.load(model_path, load_external_data=False)
        initializers = {t.name for t in model.graph.initializer}
        inputs = [v.name for v in model.graph.input if v.name not in initializers]
        data_set = sorted(glob.glob(os.path.join(directory, "test_data_set_*")))[0]
        with tempfile.TemporaryDirectory(prefix="kiln-prepare-") as work:
            paths = conformance.write_inputs(directory, data_set, inputs, work)
            # The inputs kiln must know when compiling, fixed as run.py
            # fixes them.
            fixed = []
            while True:
                flags = conformance.compile_flags(fixed, paths)
                try:
                    kiln_compile(args.kiln, model_path, os.path.join(out, name + ".kiln"),
                                 "--target", with_host(args.target), "--precision", "fp32", *flags)
                    break
                except RuntimeError as error:
                    asked = conformance.FIXABLE.search(error.stderr)
                    if not asked or asked.group(1) not in paths or asked.group(1) in fixed:
                        return name, str(error)
                    fixed.append(asked.group(1))
            arrays = {}
            for input_name in inputs:
                if input_name not in fixed:
                    arrays["in:" + input_name] = np.load(paths[input_name])
        for i, output in enumerate(model.graph.output):
            arrays["out:" + output.name] = conformance.read_tensor(
                os.path.join(data_set, f"output_{i}.pb"))
            if output.type.tensor_type.elem_type == TensorProto.BFLOAT16:
                arrays["bf16:" + output.name] = np.array(True)
        if PRODUCTS & {node.op_type for node in model.graph.node}:
            tf32 = os.path.join(out, name + ".tf32.kiln")
            try:
                with tempfile.TemporaryDirectory(prefix="kiln-prepare-") as work:
                    paths = conformance.write_inputs(directory, data_set, inputs, work)
                    for variant in variants(args.target):
                        kiln_compile(args.kiln, model_path,
                                     os.path.join(out, name + ".tf32" + variant["suffix"] + ".kiln"),
                                     "--target", with_host(variant["target"]), "--precision", "tf32",
                                     *conformance.compile_flags(fixed, paths))
                results = bundle_data.run(kiln, tf32, "host", arrays)
            except (RuntimeError, kiln.Error) as error:  # kiln compile's, or the runtime's
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
            flags = ["--precision", fp8_format(args.target), "--calibration", scales]
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
        # maximum at these sizes) to the E4M3's largest value.
        scales = os.path.join(work, "gemm_scales.json")
        with open(scales, "w") as f:
            json.dump({"tensors": {"a": 6.0, "b": 6.0}}, f)
        for precision in GEMM_PRECISIONS:
            flags = ["--precision", precision]
            if precision == "fp8":
                flags = ["--precision", fp8_format(args.target), "--calibration", scales]
            for variant in variants(args.target):
                file = f"{n}_{precision}{variant['suffix']}.kiln"
                kiln_compile(args.kiln, path, os.path.join(out, file),
                             "--target", with_host(variant["target"]), *flags)
                made.append({"n": n, "precision": precision, "file": file,
                             "kernel": variant["kernel"],
                             "format": flags[1],
                             "scales": {"a": 6.0, "b": 6.0} if precision == "fp8" else None})
    return made


def describe(kiln, artifact, target):
    """What kiln inspect --json says of the artifact: where its (one) weight
    block starts, and the kernels of its plan for `target` ([{"kind",
    "precision", "nodes", ...}], for check.py's profiles)."""
    model = json.loads(subprocess.run([kiln, "inspect", "--json", artifact], capture_output=True,
                                      text=True, check=True).stdout)
    offsets = {plan["weights_offset"] for plan in model["plans"]}
    if len(offsets) != 1:
        raise RuntimeError(f"{artifact}: expected one weight block, found {len(offsets)}")
    # The host's plans are named for their CPUs (x86-64-v4, x86-64-v3):
    # the first is the one this machine runs.
    kernels = next(plan["kernels"] for plan in model["plans"]
                   if target in plan["targets"] or target == "host")
    return offsets.pop(), kernels


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


def model_shapes(onnx_path, batch, sequence):
    """The model's inputs' shapes, its symbolic "batch" and "sequence"
    dimensions fixed (or given ranges, as `kiln compile --input-shape`
    writes them)."""
    graph = onnx.load(onnx_path, load_external_data=False).graph
    weights = {t.name for t in graph.initializer}
    fixed = {"batch": batch, "sequence": sequence}
    return {value.name: [fixed[d.dim_param] if d.dim_param else d.dim_value
                         for d in value.type.tensor_type.shape.dim]
            for value in graph.input if value.name not in weights}


def compress(data, path):
    """xz on all cores where there is one; Python's lzma otherwise."""
    import lzma

    if shutil.which("xz"):
        with open(path, "wb") as f:
            subprocess.run(["xz", "-T0", "-6", "-c"], input=data, stdout=f, check=True)
    else:
        with lzma.open(path, "wb", preset=6) as f:
            f.write(data)


def prepare_models(args, names, out, work):
    """Each model at each batch, once per variant, compressed. Only the
    first artifact of a model keeps its weights: the others' are the same
    bytes, which check.py puts back."""
    os.makedirs(out, exist_ok=True)
    entries = []
    for name in names:
        spec = MODELS[name]
        subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                        "--out", work, "--models", name, *spec["generate"]],
                       check=True, capture_output=True)
        model = os.path.join(work, name + ".onnx")
        digest = weights_digest(model)
        made = []
        for batch in MODEL_BATCHES:
            shapes = model_shapes(model, batch, spec.get("sequence"))
            for variant in variants(args.target):
                made.append({"model": name, "generate": spec["generate"], "batch": batch,
                             "sequence": spec.get("sequence"), "inputs": shapes,
                             "kernel": variant["kernel"], "target": variant["target"],
                             "file": f"{name}_b{batch}{variant['suffix']}.kiln",
                             "weights_digest": digest})
        symbolic = spec.get("symbolic")
        for variant in variants(args.target) if symbolic else []:
            made.append({"model": name, "generate": spec["generate"], "batch": None,
                         "checked": symbolic["checked"],
                         "inputs": model_shapes(model, symbolic["batch"], symbolic["sequence"]),
                         "kernel": variant["kernel"], "target": variant["target"],
                         "file": f"{name}_symbolic{variant['suffix']}.kiln",
                         "weights_digest": digest})

        def build(entry):
            path = os.path.join(work, entry["file"])
            flags = [flag for i, shape in entry["inputs"].items()
                     for flag in ("--input-shape", f"{i}={'x'.join(map(str, shape))}")]
            kiln_compile(args.kiln, model, path, "--target", entry["target"], *flags)
            at, entry["kernels"] = describe(args.kiln, path, entry["target"])
            return path, at

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            built = list(pool.map(build, made))
        weights = None
        for entry, (path, at) in zip(made, built):
            data = open(path, "rb").read()
            entry["size"] = len(data)
            if weights is None:
                weights, first, first_at = data[at:], entry["file"], at
            elif data[at:] != weights:
                raise RuntimeError(f"{entry['file']}: its weights differ from {first}'s")
            else:
                data = data[:at]
                entry.update(weights_from=first, weights_at=at, weights_from_at=first_at)
            compress(data, os.path.join(out, entry["file"] + ".xz"))
            entry.update(file=entry["file"] + ".xz", compressed=True)
            os.remove(path)
        entries += made
    return entries


def size_of(directory):
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(directory) for f in files)


def copy_package(out):
    """The kiln package, all of kiln that runs on the GPU machine (its
    runtime, without a compiler), into OUT/python/kiln."""
    source = os.path.dirname(os.path.abspath(kiln.__file__))
    shutil.copytree(source, os.path.join(out, "python", "kiln"),
                    ignore=shutil.ignore_patterns("bin", "__pycache__"))


def prepare_part(args, out, work, kernels, models):
    os.makedirs(out)
    copy_package(out)
    manifest = {"target": args.target, "variants": variants(args.target),
                "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    failed = {}
    if kernels:
        passed, tf32, failed = prepare_conformance(args, os.path.join(out, "conformance"))
        manifest.update(conformance=passed, conformance_tf32=tf32,
                        conformance_not_compiled=failed,
                        precision=prepare_precision(args, os.path.join(out, "precision"), work),
                        gemm=prepare_gemm(args, os.path.join(out, "gemm"), work))
        print(f"{out}: {len(passed)} conformance tests ({len(tf32)} in tf32 too), "
              f"{len(manifest['precision'])} precisions, {len(manifest['gemm'])} GEMMs")
        for name, reason in sorted(failed.items()):
            print(f"  not compiled: {name}: {reason}")
    manifest["models"] = prepare_models(args, models, os.path.join(out, "models"), work)
    if args.no_models:
        manifest["models_left_out"] = {name: "left out with --no-models" for name in MODELS}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = size_of(out)
    print(f"{out}: {len(manifest['models'])} model artifacts "
          f"({', '.join(models) or 'none'}); {size / (1 << 20):.1f} MiB")
    # Only a GPU's bundle travels to the GPU machine.
    if args.target != "host" and size > LIMIT - (4 << 20):
        sys.exit(f"{out} holds {size / (1 << 20):.1f} MiB; with the source tree it must "
                 "stay under the GPU machine's 64 MiB")
    return not failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--out", default=os.path.join(ROOT, "gpu-check"))
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-models", action="store_true",
                        help="leave the models out (part1 only)")
    parser.add_argument("--conformance-every", type=int, default=1, metavar="N",
                        help="take every Nth passing conformance test (CTest's run of the "
                             "check: the conformance test runs them all)")
    args = parser.parse_args()

    shutil.rmtree(args.out, ignore_errors=True)
    ok = True
    with tempfile.TemporaryDirectory(prefix="kiln-gpu-check-") as work:
        for name, part in PARTS.items():
            models = [] if args.no_models else part["models"]
            if part["kernels"] or models:
                ok &= prepare_part(args, os.path.join(args.out, name), work, part["kernels"],
                                   models)
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
