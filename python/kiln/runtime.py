# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Models and sessions: kiln's runtime from Python.

    model = kiln.Model("model.kiln")           # or kiln.Model(artifact_bytes)
    model.inputs                               # [TensorInfo(name, shape, dtype)]
    session = model.session("host", threads=4) # or "cuda:0", "hip:0"
    outputs = session.run({"input": x})        # {"output": ndarray}
"""
from __future__ import annotations

import base64
import os
from typing import Iterable, Mapping, NamedTuple, Optional, Union

import numpy as np

from kiln import _runtime
from kiln.errors import Error, Status


# ml_dtypes' types, by kiln_dtype_t: bfloat16 and the 8-bit floats.
_EXTRA = {2: "bfloat16", 13: "float8_e4m3fn", 14: "float8_e5m2"}


def _extra_dtype(code):
    """ml_dtypes' type for `code`, when ml_dtypes is installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(getattr(ml_dtypes, _EXTRA[code]))


# NumPy's dtype of each kiln_dtype_t, in order (None: needs ml_dtypes).
DTYPES = [np.dtype(np.float32), np.dtype(np.float16), _extra_dtype(2), np.dtype(np.float64),
          np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64),
          np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64),
          np.dtype(np.bool_), _extra_dtype(13), _extra_dtype(14)]
_CODES = {dtype: code for code, dtype in enumerate(DTYPES) if dtype is not None}
# Arrays of ml_dtypes' types go to the runtime as unsigned integers of their
# size (no buffer protocol knows them).
_RAW = {2: np.uint16, 13: np.uint8, 14: np.uint8}


class TensorInfo(NamedTuple):
    """A model's input or output. `shape` holds a size per dimension, or
    for a symbolic one (a size given at run time) its expression of the
    model's symbols, as onnxruntime names them: ("batch", "sequence", 768).
    `dtype` is NumPy's (ml_dtypes' for bfloat16 and the 8-bit floats; None
    for those without ml_dtypes)."""
    name: str
    shape: tuple
    dtype: Optional[np.dtype]


class Symbol(NamedTuple):
    """A size the model takes at run time (a batch, a sequence length): a
    run's value lies in [min, max]; `opt` is the value its code was tuned
    for."""
    name: str
    min: int
    max: int
    opt: int


def _shape(shape, dims) -> tuple:
    return tuple(dim if dim else size for size, dim in zip(shape, dims))


def _infos(native) -> list:
    return [TensorInfo(name, _shape(shape, dims), DTYPES[code])
            for name, shape, code, dims in native]


def _buffer(name: str, array: np.ndarray, code: int) -> tuple:
    return name, array.view(_RAW[code]) if code in _RAW else array, code


# An Ed25519 SubjectPublicKeyInfo in DER: this prefix, then the 32-byte key.
_ED25519_PREFIX = bytes.fromhex("302a300506032b6570032100")


def read_public_key(path: Union[str, os.PathLike]) -> bytes:
    """The 32-byte Ed25519 key of a PEM public key file (as `openssl pkey
    -pubout` writes it, and `kiln run --trusted-key` reads), for
    Model(..., trusted_keys=[...])."""
    try:
        with open(path) as f:
            lines = f.read().split()
        body = "".join(lines[lines.index("-----BEGIN") + 3:lines.index("-----END")])
        der = base64.b64decode(body, validate=True)
    except ValueError:
        raise ValueError(f"{path} is not a PEM public key") from None
    if len(der) != 44 or not der.startswith(_ED25519_PREFIX):
        raise ValueError(f"{path} is not an Ed25519 public key")
    return der[len(_ED25519_PREFIX):]


class Model:
    """A compiled model (a .kiln artifact), verified as it loads.

    `source` is a path or the artifact's bytes. With `trusted_keys` (32-byte
    Ed25519 public keys, see read_public_key), only an artifact signed by
    one of them loads. Immutable: any number of threads may share a model,
    each with its own session.
    """

    def __init__(self, source: Union[str, os.PathLike, bytes, bytearray, memoryview], *,
                 trusted_keys: Iterable[bytes] = ()):
        keys = [bytes(key) for key in trusted_keys]
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._model = _runtime.Model.from_bytes(bytes(source), keys)
        else:
            self._model = _runtime.Model.from_file(os.fspath(source), keys)
        self._inputs = _infos(self._model.inputs)
        self._outputs = _infos(self._model.outputs)

    @property
    def inputs(self) -> list:
        """The inputs, in order: each a TensorInfo (name, shape, dtype)."""
        return list(self._inputs)

    @property
    def outputs(self) -> list:
        """The outputs, in order: each a TensorInfo (name, shape, dtype)."""
        return list(self._outputs)

    @property
    def symbols(self) -> list:
        """The sizes the model takes at run time, each a Symbol (name, min,
        max, opt), which the inputs' and outputs' shapes name; none for a
        model of static shapes."""
        return [Symbol(*symbol) for symbol in self._model.symbols]

    @property
    def targets(self) -> list:
        """The targets the artifact has code for: ["x86-64-v4", "sm_90a", ...]."""
        return self._model.targets

    def session(self, device: str = "host", *, threads: int = 0, graph: bool = True,
                profile: bool = False) -> "Session":
        """A session on `device` ("host", "cuda:N" or "hip:N"), with its own
        memory. `threads`: the host threads a run uses (0: one per CPU).
        `graph=False` launches a GPU plan kernel by kernel instead of as one
        graph; `profile=True` times each kernel (Session.kernel_profile)."""
        return Session(self._model.session(device, threads, graph, profile), self._model)

    def __repr__(self) -> str:
        return f"kiln.Model(inputs={self._inputs}, outputs={self._outputs}, targets={self.targets})"


class Session:
    """A model on one device, with its own memory. Runs from several threads
    take turns (the GIL is released while one executes); give each thread
    its own session to run side by side."""

    def __init__(self, native, model):
        self._session = native
        self._model = model  # the model's dtypes, while the session lives
        self._outputs = [(name, tuple(shape), code, any(dims))
                         for name, shape, code, dims in model.outputs]

    def run(self, inputs: Mapping[str, np.ndarray],
            outputs: Optional[Mapping[str, np.ndarray]] = None) -> dict:
        """Runs the model on `inputs` ({name: array}, every input once, with
        the model's shape and dtype; a symbolic dimension takes any size in
        its symbol's range; C-contiguous arrays are read in place) and
        returns {name: array} for every output, of this run's shape. Arrays
        given in `outputs` ({name: array}, C-contiguous, of the output's
        shape in this run and its dtype) are written in place and returned;
        the others are new."""
        given = dict(outputs or {})
        tensors = []
        for name, value in inputs.items():
            if not isinstance(name, str):
                raise Error(Status.INVALID_ARGUMENT, f"input names must be strings, not {name!r}")
            array = np.asarray(value, order="C")
            code = _CODES.get(array.dtype)
            if code is None:
                raise Error(Status.INVALID_ARGUMENT,
                            f"input '{name}' is an array of {array.dtype}, which no kiln model "
                            "takes")
            tensors.append(_buffer(name, array, code))
        results, buffers, fresh = {}, [], []
        for name, shape, code, symbolic in self._outputs:
            dtype = DTYPES[code]
            if dtype is None:
                raise Error(Status.UNIMPLEMENTED,
                            f"output '{name}' is {_EXTRA[code]}: install ml_dtypes for NumPy "
                            "arrays of it")
            array = given.pop(name, None)
            if array is None and symbolic:
                # The run decides its shape.
                fresh.append(name)
                results[name] = None
                continue
            if array is None:
                array = np.empty(shape, dtype)
            elif not isinstance(array, np.ndarray):
                raise Error(Status.INVALID_ARGUMENT,
                            f"output '{name}' must be a NumPy array, not {type(array).__name__}")
            elif array.dtype != dtype:
                raise Error(Status.INVALID_ARGUMENT,
                            f"output '{name}' is an array of {array.dtype}, expected {dtype}")
            elif not (array.flags.c_contiguous and array.flags.writeable and array.flags.aligned):
                raise Error(Status.INVALID_ARGUMENT,
                            f"output '{name}' must be a writable, aligned, C-contiguous array")
            results[name] = array
            buffers.append(_buffer(name, array, code))
        if given:
            raise Error(Status.INVALID_ARGUMENT,
                        f"the model has no output named {next(iter(given))!r}")
        for name, shape, raw in self._session.run(tensors, buffers, fresh):
            code = next(c for n, _, c, _ in self._outputs if n == name)
            results[name] = raw.view(DTYPES[code]).reshape(shape)
        return results

    @property
    def device(self) -> str:
        """What the session runs on: "host (x86-64-v4)", "cuda:0 (NVIDIA H200, ...)"."""
        return self._session.device

    @property
    def target(self) -> str:
        """The target whose code runs, as Model.targets names it."""
        return self._session.target

    @property
    def threads(self) -> int:
        """The threads a host run uses."""
        return self._session.threads

    def kernel_milliseconds(self) -> float:
        """The last run's kernel time on a GPU, as the GPU timed it; 0 on the host."""
        return self._session.kernel_milliseconds()

    def kernel_profile(self) -> list:
        """Each kernel's milliseconds in the last run, in plan order, for a
        session made with profile=True; [] otherwise."""
        return self._session.kernel_profile()
