# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Serving kiln models with NVIDIA's Triton Inference Server, through PyTriton.

    python -m kiln.serve model_b1.kiln model_b8.kiln --instances 2
    kiln-serve model.kiln --http-port 8000 --grpc-port 8001

Triton answers HTTP and gRPC with the KServe v2 protocol, batches requests
dynamically, and reports metrics; each model instance here runs kiln
sessions on its own thread (kiln releases the GIL while a run executes).

Batching: when every input and output of the artifacts given shares a
leading (batch) dimension, that dimension is the batch Triton sees: the
server declares the other dimensions (-1 for a symbolic one) and a maximum
batch. One artifact compiled with a symbolic batch (`--input-shape
input=1..32x3x224x224`, or none for the model's own `batch`) serves every
batch Triton forms up to the symbol's largest, each in one run, without
padding. Artifacts of static shapes serve as before: the maximum batch is
the largest artifact's (or --max-batch), each batch Triton forms runs on the
largest artifacts its rows fill, and what is left is padded to the smallest
artifact when fewer rows than its batch remain.

`--repository DIR` writes a Triton model repository instead (config.pbtxt,
and a Python-backend model.py beside the artifacts) for a tritonserver of
one's own. docs/serving.md has the details.
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from typing import Sequence

import numpy as np

from kiln.errors import Error, Status
from kiln.runtime import Model, read_public_key

LOGGER = logging.getLogger("kiln.serve")


class Signature:
    """What a set of artifacts of one model serves: each input and output's
    name, dtype and shape without the batch, and the batch of each artifact
    (None when they do not batch)."""

    def __init__(self, models: Sequence[Model]):
        if not models:
            raise Error(Status.INVALID_ARGUMENT, "no artifact to serve")
        first = models[0]
        self.inputs = [(i.name, i.dtype) for i in first.inputs]
        self.outputs = [(o.name, o.dtype) for o in first.outputs]
        for info in first.inputs + first.outputs:
            # (ml_dtypes' bfloat16 and 8-bit floats are of kind "V".)
            if info.dtype is None or info.dtype.kind not in "biuf":
                raise Error(Status.UNIMPLEMENTED,
                            f"tensor '{info.name}' is {info.dtype}, which Triton's Python "
                            "backend cannot carry")

        def batch_of(model):
            tensors = model.inputs + model.outputs
            leading = {info.shape[0] if info.shape else None for info in tensors}
            return leading.pop() if len(leading) == 1 and None not in leading else None

        # A batch the model takes at run time (a symbol every tensor leads
        # with) serves every batch in its range, each in one run.
        batches = [batch_of(model) for model in models]
        symbols = {symbol.name: symbol for symbol in first.symbols}
        self.symbolic = symbols.get(batches[0]) if batches[0] is not None else None
        if any(isinstance(batch, str) for batch in batches):
            if len(models) > 1:
                raise Error(Status.INVALID_ARGUMENT,
                            "an artifact whose batch is symbolic serves every batch alone; "
                            "serve it without other artifacts")
            if self.symbolic is None:
                raise Error(Status.INVALID_ARGUMENT,
                            f"the artifact's leading dimension is {batches[0]}, which is no "
                            "batch of its own: compile it with a symbolic batch")
            batches = [self.symbolic.max]
        rest = [[info.shape[1:] for info in m.inputs + m.outputs] for m in models]
        full = [[info.shape for info in m.inputs + m.outputs] for m in models]
        for model in models[1:]:
            names = ([i.name for i in model.inputs], [o.name for o in model.outputs])
            if names != ([n for n, _ in self.inputs], [n for n, _ in self.outputs]):
                raise Error(Status.INVALID_ARGUMENT,
                            "the artifacts serve different models: their inputs and outputs "
                            "differ")
        if len(models) > 1 and (None in batches or any(r != rest[0] for r in rest)):
            raise Error(Status.INVALID_ARGUMENT,
                        "artifacts served together must differ only in the batch, the leading "
                        f"dimension of every input and output; their shapes are {full}")
        if len(set(batches)) != len(batches):
            raise Error(Status.INVALID_ARGUMENT, f"two artifacts have the same batch: {batches}")
        self.batched = None not in batches
        self.batches = batches
        # Dimensions a run gives, other than the batch (a sequence), are -1
        # to Triton: any size.
        self.shapes = {info.name: tuple(d if isinstance(d, int) else -1
                                        for d in (info.shape[1:] if self.batched else info.shape))
                       for info in first.inputs + first.outputs}
        # Triton wants dims: a batch of scalars is declared [1] (arriving as
        # rows of one element).
        self.scalars = {name for name, shape in self.shapes.items() if not shape}
        self.shapes = {name: shape or (1,) for name, shape in self.shapes.items()}
        self.max_batch = max(batches) if self.batched else 0


class Instance:
    """One model instance: a session per artifact, and the batching."""

    def __init__(self, models: Sequence[Model], signature: Signature, device: str, threads: int):
        self.signature = signature
        # Smallest batch first.
        order = sorted(range(len(models)), key=lambda i: signature.batches[i] or 0)
        self.sessions = [(signature.batches[i], models[i].session(device, threads=threads))
                         for i in order]

    def __call__(self, **inputs: np.ndarray) -> dict:
        if not self.signature.batched:
            return self.sessions[0][1].run(inputs)
        inputs = {name: array.reshape(-1) if name in self.signature.scalars else array
                  for name, array in inputs.items()}
        rows = len(next(iter(inputs.values())))
        symbolic = self.signature.symbolic
        pieces, start = [], 0
        while start < rows:
            left = rows - start
            if symbolic:
                # Any batch in the symbol's range is one run; fewer rows
                # than its least are padded to it.
                batch, session = max(min(left, symbolic.max), symbolic.min), self.sessions[0][1]
            else:
                # The largest artifact the rows left fill, else the
                # smallest, padded: no row is computed twice while a
                # smaller one fits.
                filled = [(b, s) for b, s in self.sessions if b <= left]
                batch, session = filled[-1] if filled else self.sessions[0]
            count = min(batch, left)
            chunk = {}
            for name, array in inputs.items():
                part = array[start:start + count]
                if count < batch:  # pad with copies of the last row
                    part = np.concatenate([part, np.repeat(part[-1:], batch - count, axis=0)])
                chunk[name] = part
            outputs = session.run(chunk)
            pieces.append({name: array[:count].reshape(count, 1)
                           if name in self.signature.scalars else array[:count]
                           for name, array in outputs.items()})
            start += count
        if len(pieces) == 1:
            return pieces[0]
        return {name: np.concatenate([piece[name] for piece in pieces]) for name in pieces[0]}


def bind(triton, name: str, models: Sequence[Model], *, instances: int = 1,
         device: str = "host", threads: int = 0, max_queue_delay_us: int = 100,
         max_batch: int = 0) -> Signature:
    """Binds the artifacts `models` (one model, at one or more batch sizes)
    to a pytriton.triton.Triton as model `name`, with `instances` instances
    each running its own sessions on `device`. `max_batch`: the largest
    batch Triton accepts (default: the largest artifact's; larger ones run
    as several)."""
    from pytriton.decorators import batch
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor

    signature = Signature(models)
    if signature.batched and max_batch:
        signature.max_batch = max_batch
    functions = []
    for _ in range(instances):
        instance = Instance(models, signature, device, threads)
        functions.append(batch(instance.__call__) if signature.batched else _unbatched(instance))
    config = ModelConfig(
        max_batch_size=signature.max_batch,
        batcher=DynamicBatcher(max_queue_delay_microseconds=max_queue_delay_us),
    ) if signature.batched else ModelConfig(batching=False)
    triton.bind(
        model_name=name,
        infer_func=functions,
        inputs=[Tensor(name=n, dtype=d.type, shape=signature.shapes[n]) for n, d in signature.inputs],
        outputs=[Tensor(name=n, dtype=d.type, shape=signature.shapes[n])
                 for n, d in signature.outputs],
        config=config,
        strict=True,
    )
    return signature


# Triton's name of each NumPy type a model can serve.
_TRITON_TYPES = {"bool": "TYPE_BOOL", "uint8": "TYPE_UINT8", "uint16": "TYPE_UINT16",
                 "uint32": "TYPE_UINT32", "uint64": "TYPE_UINT64", "int8": "TYPE_INT8",
                 "int16": "TYPE_INT16", "int32": "TYPE_INT32", "int64": "TYPE_INT64",
                 "float16": "TYPE_FP16", "float32": "TYPE_FP32", "float64": "TYPE_FP64"}


def write_repository(directory, name: str, artifacts: Sequence[str], *, instances: int = 1,
                     device: str = "host", threads: int = 0, max_queue_delay_us: int = 100,
                     max_batch: int = 0) -> str:
    """Writes a Triton model repository serving `artifacts` as model `name`
    (config.pbtxt, and model.py for Triton's Python backend beside the
    artifacts in version 1), for a tritonserver of one's own. Returns the
    model's folder."""
    signature = Signature([Model(path) for path in artifacts])
    model_dir = os.path.join(directory, name)
    version = os.path.join(model_dir, "1")
    os.makedirs(version, exist_ok=True)
    for path in artifacts:
        shutil.copyfile(path, os.path.join(version, os.path.basename(path)))
    shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "triton_model.py"),
                    os.path.join(version, "model.py"))

    def tensors(kind, infos):
        entries = [f'  {{ name: "{n}" data_type: {_TRITON_TYPES[d.name]} '
                   f'dims: [ {", ".join(str(x) for x in signature.shapes[n])} ] }}'
                   for n, d in infos]
        return f"{kind} [\n" + ",\n".join(entries) + "\n]\n"

    lines = [f'name: "{name}"\n', 'backend: "python"\n']
    if signature.batched:
        lines.append(f"max_batch_size: {max_batch or signature.max_batch}\n")
        lines.append(f"dynamic_batching {{ max_queue_delay_microseconds: {max_queue_delay_us} }}\n")
    lines.append(f"instance_group [ {{ count: {instances} kind: KIND_CPU }} ]\n")
    lines.append(tensors("input", signature.inputs))
    lines.append(tensors("output", signature.outputs))
    for key, value in (("device", device), ("threads", str(threads))):
        lines.append(f'parameters: {{ key: "{key}" value: {{ string_value: "{value}" }} }}\n')
    with open(os.path.join(model_dir, "config.pbtxt"), "w") as f:
        f.writelines(lines)
    return model_dir


def _unbatched(instance):
    """PyTriton's callable for a model without a batch: one request at a time."""
    def infer(requests):
        return [instance(**request) for request in requests]
    return infer


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m kiln.serve",
        description="Serve kiln artifacts with Triton Inference Server (KServe v2 over HTTP and "
                    "gRPC, dynamic batching, metrics).")
    parser.add_argument("artifacts", nargs="+",
                        help="the model's .kiln artifacts, one per batch size")
    parser.add_argument("--name", help="the model's name (default: the first artifact's stem)")
    parser.add_argument("--device", default="host", help="host, cuda:N or hip:N")
    parser.add_argument("--instances", type=int, default=1,
                        help="model instances, each with its own sessions (default 1)")
    parser.add_argument("--threads", type=int, default=0,
                        help="host threads per run (default: the CPUs over the instances)")
    parser.add_argument("--max-batch", type=int, default=0,
                        help="the largest batch a request or Triton's batcher may form "
                             "(default: the largest artifact's; larger ones run as several)")
    parser.add_argument("--max-queue-delay-us", type=int, default=100,
                        help="how long Triton may hold a request to batch it (default 100)")
    parser.add_argument("--address", default="127.0.0.1",
                        help="the address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    parser.add_argument("--http-port", type=int, default=8000)
    parser.add_argument("--grpc-port", type=int, default=8001)
    parser.add_argument("--metrics-port", type=int, default=8002)
    parser.add_argument("--trusted-key", action="append", default=[],
                        help="an Ed25519 public key (PEM) that must have signed the artifacts")
    parser.add_argument("--verbose", action="store_true", help="Triton's own log too")
    parser.add_argument("--repository", metavar="DIR",
                        help="write a Triton model repository for these artifacts (Python "
                             "backend) into DIR instead of serving")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    threads = args.threads or max(1, (os.cpu_count() or 1) // args.instances)
    name = args.name or os.path.splitext(os.path.basename(args.artifacts[0]))[0]
    if args.repository:
        try:
            folder = write_repository(args.repository, name, args.artifacts,
                                      instances=args.instances, device=args.device,
                                      threads=threads, max_batch=args.max_batch,
                                      max_queue_delay_us=args.max_queue_delay_us)
        except (Error, OSError) as error:
            sys.exit(f"kiln.serve: {error}")
        LOGGER.info("wrote model '%s' into %s", name, folder)
        return
    try:
        from pytriton.triton import Triton, TritonConfig
    except ImportError as error:
        sys.exit(f"kiln.serve: PyTriton is not installed ({error}): pip install "
                 "'kiln[serve]' (in a venv of the system's own Python, docs/serving.md)")
    try:
        keys = [read_public_key(path) for path in args.trusted_key]
        models = [Model(path, trusted_keys=keys) for path in args.artifacts]
        config = TritonConfig(http_address=args.address, http_port=args.http_port,
                              grpc_address=args.address, grpc_port=args.grpc_port,
                              metrics_address=args.address, metrics_port=args.metrics_port,
                              log_verbose=1 if args.verbose else None)
        for attempt in range(1, _STARTS + 1):
            with Triton(config=config) as triton:
                try:
                    signature = bind(triton, name, models, instances=args.instances,
                                     device=args.device, threads=threads,
                                     max_queue_delay_us=args.max_queue_delay_us,
                                     max_batch=args.max_batch)
                except Exception as error:  # noqa: BLE001 (tritonclient's, through PyTriton)
                    if not _instances_raced(error) or attempt == _STARTS:
                        raise
                    LOGGER.warning("PyTriton's model instances raced as they started; "
                                   "starting again (%d of %d)", attempt + 1, _STARTS)
                    continue
                if signature.symbolic:
                    batching = (f"batches up to {signature.max_batch} (one artifact, its "
                                f"batch '{signature.symbolic.name}' from "
                                f"{signature.symbolic.min} to {signature.symbolic.max})")
                elif signature.batched:
                    batching = (f"batches up to {signature.max_batch} (artifacts of batch "
                                f"{', '.join(str(b) for b in sorted(signature.batches))})")
                else:
                    batching = "no batching"
                LOGGER.info("serving '%s' on %s: HTTP %d, gRPC %d, metrics %d; %s; "
                            "%d instance(s) on %s", name, args.address, args.http_port,
                            args.grpc_port, args.metrics_port, batching, args.instances,
                            args.device)
                triton.serve()
                return
    except (Error, ValueError) as error:
        sys.exit(f"kiln.serve: {error}")


# PyTriton 0.7's model instances after the first read their configuration
# from a Unix socket the first one opens; one that connects between the
# socket's bind and its listen is refused, and the model fails to load. It
# happens on loaded machines: the server then starts again, from scratch.
_STARTS = 3


def _instances_raced(error):
    return "get_config_from_handshake_server" in str(error) and "Connection refused" in str(error)


if __name__ == "__main__":
    main()
