#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Serving through Triton Inference Server: kiln against onnxruntime, both
behind PyTriton with the same batching, instances and load.

    build/venv/bin/python tools/bench/serve.py [--models mobilenetv2,resnet50]
        [--clients 8] [--requests 200] [--rounds 2] [--instances 2]

For each model (test/models/generate.py; batch 1 requests of one image),
`python -m kiln.serve` serves kiln's artifacts at batch 1 and 8, and this
script (--serve-onnxruntime) serves one onnxruntime session per instance
the same way (dynamic batching up to 8, `--instances` instances, one
intra-op thread each). CLIENTS threads send REQUESTS requests each (gRPC
and HTTP alternately by client, as the serving test does); the script
reports requests per second and the latency percentiles the clients saw,
and the ratio kiln / onnxruntime of throughput. The two servers alternate
for several rounds, and each keeps its best round: the machine is shared.
Needs build/venv (tools/setup.sh) with the package installed.
"""
import argparse
import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

BATCHES = (1, 8)


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def serve_onnxruntime(path, name, instances, ports):
    """Serves `path` with onnxruntime, as kiln.serve serves kiln."""
    import onnxruntime
    from pytriton.decorators import batch
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig

    def instance():
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return batch(lambda **inputs: dict(zip(names, session.run(None, inputs))))

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    http, grpc, metrics = ports
    config = TritonConfig(http_address="127.0.0.1", http_port=http, grpc_address="127.0.0.1",
                          grpc_port=grpc, metrics_address="127.0.0.1", metrics_port=metrics)
    with Triton(config=config) as triton:
        triton.bind(model_name=name, infer_func=[instance() for _ in range(instances)],
                    inputs=[Tensor(name=i.name, dtype=np.float32, shape=tuple(i.shape[1:]))
                            for i in session.get_inputs()],
                    outputs=[Tensor(name=o.name, dtype=np.float32, shape=tuple(o.shape[1:]))
                             for o in session.get_outputs()],
                    config=ModelConfig(max_batch_size=max(BATCHES),
                                       batcher=DynamicBatcher(max_queue_delay_microseconds=100)),
                    strict=True)
        triton.serve()


def wait_ready(process, port, name):
    import tritonclient.http as httpclient
    client = httpclient.InferenceServerClient(f"127.0.0.1:{port}")
    deadline = time.monotonic() + 300
    while True:
        if process.poll() is not None:
            sys.exit(f"the server exited:\n{process.stdout.read()}")
        try:
            if client.is_model_ready(name):
                return
        except Exception:  # not listening yet
            pass
        if time.monotonic() > deadline:
            process.kill()
            sys.exit("the server was not ready in 300 s")
        time.sleep(0.5)


def load(ports, name, input_name, shape, clients, requests):
    """requests/s and latencies (s) of `clients` threads x `requests` each."""
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient

    def client(index):
        module, port = (httpclient, ports[0]) if index % 2 else (grpcclient, ports[1])
        connection = module.InferenceServerClient(f"127.0.0.1:{port}")
        x = np.random.default_rng(index).standard_normal([1, *shape]).astype(np.float32)
        given = module.InferInput(input_name, list(x.shape), "FP32")
        given.set_data_from_numpy(x)
        latencies = []
        for _ in range(requests):
            start = time.perf_counter()
            connection.infer(name, [given])
            latencies.append(time.perf_counter() - start)
        return latencies

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        latencies = np.sort(np.concatenate(list(pool.map(client, range(clients)))))
    return clients * requests / (time.perf_counter() - start), latencies


def run_server(command, ports, name):
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    wait_ready(process, ports[0], name)
    return process


def stop(process):
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mobilenetv2,resnet50")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--kiln", default=models.KILN)
    parser.add_argument("--model-dir", default=models.DEFAULT_DIR)
    parser.add_argument("--serve-onnxruntime", nargs=3, metavar=("MODEL", "NAME", "PORTS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_onnxruntime:
        path, name, ports = args.serve_onnxruntime
        serve_onnxruntime(path, name, args.instances, [int(p) for p in ports.split(",")])
        return

    print(f"uptime: {os.popen('uptime').read().strip()}")
    names = args.models.split(",")
    paths = models.ensure(args.model_dir, names)
    print(f"| model | server | requests/s | p50 ms | p90 ms | p99 ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name in names:
        [(input_name, shape)] = models.INPUT_SHAPES[name].items()
        with tempfile.TemporaryDirectory(prefix="kiln-serve-bench-") as work:
            artifacts = []
            for size in BATCHES:
                artifact = os.path.join(work, f"{name}_b{size}.kiln")
                subprocess.run([args.kiln, "compile", paths[name], "-o", artifact,
                                f"--input-shape={input_name}={size}x" +
                                "x".join(map(str, shape[1:]))], check=True)
                artifacts.append(artifact)
            best = {}
            for _ in range(args.rounds):
                for server in ("kiln", "onnxruntime"):
                    ports = free_ports(3)
                    port_flags = ["--http-port", str(ports[0]), "--grpc-port", str(ports[1]),
                                  "--metrics-port", str(ports[2])]
                    command = ([sys.executable, "-m", "kiln.serve", *artifacts, "--name", name,
                                "--instances", str(args.instances), "--threads", "1",
                                *port_flags] if server == "kiln" else
                               [sys.executable, __file__, "--instances", str(args.instances),
                                "--serve-onnxruntime", paths[name], name,
                                ",".join(map(str, ports))])
                    process = run_server(command, ports, name)
                    try:
                        load(ports, name, input_name, shape[1:], args.clients, 5)  # warm up
                        rate, latencies = load(ports, name, input_name, shape[1:], args.clients,
                                               args.requests)
                    finally:
                        stop(process)
                    if rate > best.get(server, (0,))[0]:
                        best[server] = (rate, latencies)
            for server, (rate, latencies) in best.items():
                p = [latencies[min(len(latencies) - 1, int(len(latencies) * q))] * 1e3
                     for q in (0.5, 0.9, 0.99)]
                print(f"| {name} | {server} | {rate:.1f} | {p[0]:.1f} | {p[1]:.1f} | {p[2]:.1f} |",
                      flush=True)
            print(f"| {name} | kiln / onnxruntime throughput | "
                  f"{best['kiln'][0] / best['onnxruntime'][0]:.2f} | | | |", flush=True)


if __name__ == "__main__":
    main()
