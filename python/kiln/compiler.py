# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The compiler from Python: kiln.compile and kiln.calibrate.

They run the `kiln` compiler executable, as IREE's iree.compiler.tools
runs iree-compile: a model that makes the compiler fail (or a compiler
bug) cannot take the Python process down with it, and the package needs no
LLVM or MLIR unless the compiler is used. The executable is, in order:
$KILN_COMPILER; the one carried in the package (built with
-C cmake.define.KILN_COMPILER=PATH); `kiln` on PATH.
"""
import os
import shutil
import subprocess
import tempfile

import numpy as np

from kiln.errors import CompileError, Error, Status
from kiln.runtime import Model


def compiler_path():
    """The kiln compiler executable this package runs."""
    given = os.environ.get("KILN_COMPILER")
    if given:
        if not os.access(given, os.X_OK):
            raise Error(Status.NOT_FOUND, f"KILN_COMPILER is '{given}', which is not an executable")
        return given
    carried = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "kiln")
    if os.access(carried, os.X_OK):
        return carried
    found = shutil.which("kiln")
    if found:
        return found
    raise Error(Status.UNAVAILABLE,
                "no kiln compiler: set KILN_COMPILER to one (build/bin/kiln), put `kiln` on "
                "PATH, or build the package with -C cmake.define.KILN_COMPILER=build/bin/kiln")


def _run(arguments):
    command = [compiler_path(), *arguments]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        # Each plan of the artifact reports the same error: once is enough.
        lines = list(dict.fromkeys(line.removeprefix("kiln: ")
                                   for line in done.stderr.splitlines() if line.strip()))
        message = "\n".join(lines) or f"the compiler exited with status {done.returncode}"
        raise CompileError(message, command)
    return done.stdout


def _dim(dim):
    if isinstance(dim, str):
        return dim
    if isinstance(dim, tuple):
        low, high = dim
        return f"{int(low)}..{int(high)}"
    return str(int(dim))


def _shape_flags(input_shapes):
    flags = []
    for name, shape in (input_shapes or {}).items():
        dims = "x".join(_dim(d) for d in shape) if len(shape) else "scalar"
        flags += ["--input-shape", f"{name}={dims}"]
    return flags


def compile(model, *, input_shapes=None, targets=None, precision=None, calibration=None,
            layout=None, keep_fp32=None, output=None, options=()):
    """Compiles an ONNX model (a path) into an artifact and returns it loaded.

    input_shapes: {input: shape}, each dimension a size, a range (MIN,
    MAX) or the text --input-shape takes ("1..8"), for the inputs whose
    shape the model leaves open (the batch); a symbolic dimension with no
    shape given takes 1 to 1024, and one artifact serves every size in the
    ranges (docs/cli.md, "Symbolic dimensions"). targets: ["host", "sm_90a", "gfx942", ...]; default,
    the host. precision: "fp32", "tf32", "fp16", "bf16", "fp8" or
    "fp8-fnuz"; fp8 needs `calibration` (a file from kiln.calibrate).
    layout: "nchw" or "nhwc". keep_fp32: operator types or parts of node
    names that stay fp32. output: where to write the artifact (default: a
    temporary file, deleted once loaded). options: further `kiln compile`
    flags (docs/cli.md). Raises CompileError naming what the compiler
    refused.
    """
    flags = _shape_flags(input_shapes)
    if targets:
        flags += ["--target", ",".join([targets] if isinstance(targets, str) else targets)]
    if precision:
        flags += ["--precision", precision]
    if calibration:
        flags += ["--calibration", os.fspath(calibration)]
    if layout:
        flags += ["--layout", layout]
    if keep_fp32:
        flags += ["--keep-fp32", ",".join([keep_fp32] if isinstance(keep_fp32, str) else keep_fp32)]
    flags += list(options)
    if output is not None:
        _run(["compile", os.fspath(model), *flags, "-o", os.fspath(output)])
        return Model(output)
    with tempfile.TemporaryDirectory(prefix="kiln-") as work:
        path = os.path.join(work, "model.kiln")
        _run(["compile", os.fspath(model), *flags, "-o", path])
        with open(path, "rb") as f:
            return Model(f.read())


def calibrate(model, samples, *, input_shapes=None, output=None):
    """Records the absolute maximum of every activation the model's products
    read, over `samples`, for compile(..., precision="fp8",
    calibration=...). samples: a folder as `kiln calibrate --inputs` takes
    it, or a list of {input: array} (one dict a sample). Writes the file to
    `output` (default: a temporary one) and returns its path.
    """
    with tempfile.TemporaryDirectory(prefix="kiln-calibrate-") as work:
        if isinstance(samples, (str, os.PathLike)):
            folder = os.fspath(samples)
        else:
            folder = os.path.join(work, "samples")
            for index, sample in enumerate(samples):
                directory = os.path.join(folder, f"{index:06d}")
                os.makedirs(directory)
                for name, array in sample.items():
                    if "/" in name or name in (".", ".."):
                        raise Error(Status.INVALID_ARGUMENT,
                                    f"input '{name}' cannot name a sample file: pass a folder")
                    np.save(os.path.join(directory, name + ".npy"), np.asarray(array))
            if not os.path.isdir(folder):
                raise Error(Status.INVALID_ARGUMENT, "calibrate: no samples")
        if output is None:
            handle, output = tempfile.mkstemp(prefix="kiln-scales-", suffix=".json")
            os.close(handle)
        _run(["calibrate", os.fspath(model), "--inputs", folder, *_shape_flags(input_shapes),
              "-o", os.fspath(output)])
    return os.fspath(output)
