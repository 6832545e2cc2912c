#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs the ONNX backend tests (Debian's libonnx-testdata) through kiln.

Each test's model is compiled for the host (kiln compile -o model.kiln), run
on every test data set (kiln run) and compared with the expected outputs at
the ONNX backend's tolerances, rtol 1e-3 and atol 1e-7, unless
tolerances.txt gives a test looser ones with a reason.

    run.py [--kiln build/bin/kiln] [--data /usr/share/libonnx-testdata/data]
           [--expected test/conformance/passing.txt] [--jobs 2] [--filter SUBSTRING]
           [--write-passing FILE] [--gpu-targets sm_80,sm_90,gfx942]

With --gpu-targets, each model the host runs is also compiled for those
GPU targets: NVIDIA ones (sm_*) into an artifact, which assembles its PTX
with ptxas, and each AMD one (gfx*) into an HSA code object (--emit
hsaco), which ld.lld links. A model that compiles for the host but not for
them fails.

Some tests give a graph input that kiln must know when compiling (a
Reshape's shape, a Slice's starts); when kiln's error names such an input,
the test is compiled again with it fixed to each data set's value by
`kiln compile --input-value`, and the summary counts those passes apart.

A test is *unsupported* when kiln rejects the model as using an operator,
element type or feature it does not support, *failed* when it compiles
wrongly, crashes or gives wrong numbers, and *passed* otherwise. Failures
listed in known_failures.txt (with their reasons) are reported apart. With
--expected, every test listed there must pass: the exit status is 1 on any
regression, and also on any failure not listed as known.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CATEGORIES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
RTOL, ATOL = 1e-3, 1e-7
# Messages that mean "kiln does not support this" rather than "kiln is wrong".
UNSUPPORTED = ["unsupported operator", "which kiln does not support", "is not supported",
               "imports no opset of the default ONNX domain",
               "must be a constant", "symbolic dimension", "has no shape",
               "no kernel generator", "are not supported", "not supported;",
               "version converter cannot upgrade it"]


def load_tolerances():
    tolerances = {}
    path = os.path.join(HERE, "tolerances.txt")
    if os.path.exists(path):
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if line:
                name, rtol, atol = line.split()[:3]
                tolerances[name] = (float(rtol), float(atol))
    return tolerances


def load_known_failures():
    known = {}
    for line in open(os.path.join(HERE, "known_failures.txt")):
        line = line.strip()
        if line and not line.startswith("#"):
            name, reason = line.split(None, 1)
            known[name] = reason
    return known


def read_tensor(path):
    """The tensor as NumPy sees it; bfloat16 as uint16 bits, as kiln run
    exchanges it."""
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    array = numpy_helper.to_array(tensor)
    if tensor.data_type == onnx.TensorProto.BFLOAT16:
        array = np.ascontiguousarray(array).view(np.uint16)
    return array


def as_float(array, bfloat16):
    if bfloat16:
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def first_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0][:300] if lines else "(no message)"


FIXABLE = re.compile(r"graph inputs? '([^']+)'[^;]*--input-value")


def write_inputs(directory, data_set, input_names, work):
    """Saves the data set's inputs as .npy files; returns name -> path."""
    paths = {}
    for i, input_name in enumerate(input_names):
        array = read_tensor(os.path.join(data_set, f"input_{i}.pb"))
        path = os.path.join(work, f"input_{i}.npy")
        np.save(path, array if array.flags.c_contiguous else np.ascontiguousarray(array))
        paths[input_name] = path
    return paths


def compile_flags(fixed, paths):
    flags = []
    for name in fixed:
        flags += ["--input-value", f"{name}={paths[name]}"]
    return flags


def run_test(kiln, directory, tolerances, gpu_compiles):
    """Returns (status, detail) with status passed, failed or unsupported.

    When kiln asks for a graph input's value when compiling (a Reshape's
    shape, a Slice's starts), the test is compiled again with that input
    fixed by --input-value to each data set's value, and passes with a
    detail that says so."""
    name = os.path.basename(directory)
    model_path = os.path.join(directory, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    input_names = [v.name for v in model.graph.input if v.name not in initializers]
    output_names = [v.name for v in model.graph.output]
    bfloat16 = [v.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
                for v in model.graph.output]
    rtol, atol = tolerances.get(name, (RTOL, ATOL))
    data_sets = sorted(glob.glob(os.path.join(directory, "test_data_set_*")))
    fixed = []
    with tempfile.TemporaryDirectory(prefix="kiln-conformance-") as work:
        artifact = os.path.join(work, "model.kiln")
        for index, data_set in enumerate(data_sets):
            try:
                paths = write_inputs(directory, data_set, input_names, work)
            except (ValueError, TypeError) as error:  # a sequence or optional
                paths, unreadable = {}, error
            # The first data set settles which inputs must be fixed; the
            # others compile again only when some are.
            while index == 0 or fixed:
                compiled = subprocess.run(
                    [kiln, "compile", model_path, "-o", artifact] + compile_flags(fixed, paths),
                    capture_output=True, text=True, errors="replace")
                if compiled.returncode == 0:
                    break
                message = first_line(compiled.stderr)
                if compiled.returncode < 0:
                    return "failed", f"compiler crashed ({message})"
                asked = FIXABLE.search(compiled.stderr)
                if index == 0 and asked and asked.group(1) in paths and \
                        asked.group(1) not in fixed:
                    fixed.append(asked.group(1))
                    continue
                if any(marker in message for marker in UNSUPPORTED):
                    return "unsupported", message
                return "failed", message

            for targets, emit in (gpu_compiles if index == 0 else []):
                gpu = subprocess.run([kiln, "compile", model_path, "--target", targets,
                                      "-o", os.path.join(work, "gpu." + emit)] +
                                     (["--emit", emit] if emit != "kiln" else []) +
                                     compile_flags(fixed, paths),
                                     capture_output=True, text=True, errors="replace")
                if gpu.returncode != 0:
                    kind = " crashed" if gpu.returncode < 0 else ""
                    return "failed", f"--target {targets}{kind}: {first_line(gpu.stderr)}"

            if len(paths) != len(input_names):
                return "failed", f"the test data's inputs do not read as tensors: {unreadable}"
            flags = []
            for input_name in input_names:
                if input_name not in fixed:
                    flags += ["--input", f"{input_name}={paths[input_name]}"]
            out_dir = os.path.join(work, "out")
            ran = subprocess.run([kiln, "run", artifact, "--output-dir", out_dir] + flags,
                                 capture_output=True, text=True, errors="replace")
            if ran.returncode != 0:
                kind = "crashed" if ran.returncode < 0 else "failed"
                return "failed", f"kiln run {kind}: {first_line(ran.stderr)}"
            for i, output_name in enumerate(output_names):
                expected = read_tensor(os.path.join(data_set, f"output_{i}.pb"))
                actual = np.load(os.path.join(out_dir, output_name + ".npy"))
                if actual.shape != expected.shape or actual.dtype != expected.dtype:
                    return "failed", (f"output {output_name}: {actual.dtype}{list(actual.shape)} "
                                      f"instead of {expected.dtype}{list(expected.shape)}")
                exact = expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer)
                if exact and not bfloat16[i]:
                    if not np.array_equal(actual, expected):
                        return "failed", f"output {output_name}: values differ"
                    continue
                got, want = as_float(actual, bfloat16[i]), as_float(expected, bfloat16[i])
                if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                    error = np.nanmax(np.abs(got - want))
                    return "failed", f"output {output_name}: max abs error {error:.3g}"
    return "passed", ("with --input-value " + ", ".join(fixed)) if fixed else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--expected", help="tests that must pass (one name a line)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--filter", default="", help="run only tests whose name contains this")
    parser.add_argument("--write-passing", help="write the names of passing tests here")
    parser.add_argument("--write-unsupported",
                        help="write the unsupported tests, with kiln's reason, here")
    parser.add_argument("--verbose", action="store_true", help="print every test's result")
    parser.add_argument("--gpu-targets", default="",
                        help="also compile each model for these GPU targets: NVIDIA ones into "
                             "an artifact (ptxas-checked), AMD ones each into a code object")
    args = parser.parse_args()
    # (--target list, what to emit) for each GPU compilation of a model.
    targets = [t.strip() for t in args.gpu_targets.split(",") if t.strip()]
    nvidia = [t for t in targets if not t.startswith("gfx")]
    gpu_compiles = ([(",".join(nvidia), "kiln")] if nvidia else []) + \
        [(t, "hsaco") for t in targets if t.startswith("gfx")]

    directories = []
    for category in CATEGORIES:
        for directory in sorted(glob.glob(os.path.join(args.data, category, "*"))):
            if args.filter in os.path.basename(directory) and \
                    os.path.exists(os.path.join(directory, "model.onnx")):
                directories.append(directory)
    if not directories:
        sys.exit(f"no ONNX backend tests under {args.data}: install libonnx-testdata")

    tolerances = load_tolerances()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_test, args.kiln, d, tolerances, gpu_compiles): d
                   for d in directories}
        for future in concurrent.futures.as_completed(futures):
            name = os.path.basename(futures[future])
            results[name] = future.result()

    known = load_known_failures()
    counts = {"passed": 0, "failed": 0, "known": 0, "unsupported": 0}
    fixed = 0
    for name in sorted(results):
        status, detail = results[name]
        if status == "failed" and name in known:
            status, detail = "known", f"{detail} (known: {known[name]})"
        counts[status] += 1
        fixed += status == "passed" and bool(detail)
        if args.verbose or status in ("failed", "known"):
            print(f"{status.upper():12} {name}: {detail}")
    print(f"ONNX backend tests: {counts['passed']} passed ({fixed} of them with graph inputs "
          f"fixed by --input-value), "
          f"{counts['failed'] + counts['known']} failed ({counts['known']} of them known, "
          f"with reasons in known_failures.txt), {counts['unsupported']} unsupported "
          f"(of {len(results)})")

    if args.write_passing:
        with open(args.write_passing, "w") as f:
            for name in sorted(results):
                if results[name][0] == "passed":
                    f.write(name + "\n")
    if args.write_unsupported:
        with open(args.write_unsupported, "w") as f:
            f.write("# Backend tests kiln rejects, with kiln's reason: an operator it does\n"
                    "# not import, or a supported one used in a way it does not support.\n"
                    "# Made by run.py --write-unsupported.\n")
            for name in sorted(results):
                status, detail = results[name]
                if status == "unsupported":
                    reason = detail.split("model.onnx: ", 1)[-1]
                    f.write(f"{name}  {reason}\n")
    if args.expected:
        expected = [l.strip() for l in open(args.expected) if l.strip() and not l.startswith("#")]
        regressions = [n for n in expected if n in results and results[n][0] != "passed"]
        missing = [n for n in expected if n not in results]
        for name in regressions:
            print(f"REGRESSION   {name}: {results[name][1]}")
        for name in missing:
            print(f"MISSING      {name}: listed in {args.expected} but not found")
        if regressions or missing or counts["failed"]:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
