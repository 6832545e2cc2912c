# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Serving through Triton Inference Server (PyTriton): `python -m kiln.serve`
on 127.0.0.1 with free ports, requests over HTTP and gRPC (tritonclient)
against onnxruntime, a bounded load of concurrent clients, and shutdown."""
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import onnxruntime
import pytest

import kiln

try:
    import pytriton  # noqa: F401
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient
except ImportError as error:  # only where PyTriton cannot be installed
    pytest.skip(f"PyTriton or tritonclient is not installed here ({error}); tools/setup.sh "
                "installs them into build/venv", allow_module_level=True)

CLIENTS, REQUESTS = 8, 200


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@pytest.fixture(scope="module")
def server(mlp):
    _, artifacts = mlp
    http, grpc, metrics = free_ports(3)
    process = subprocess.Popen(
        [sys.executable, "-m", "kiln.serve", *map(str, artifacts), "--name", "mlp",
         "--instances", "2", "--threads", "1", "--max-batch", "16", "--http-port", str(http), "--grpc-port",
         str(grpc), "--metrics-port", str(metrics)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_ready(process, http, "kiln.serve")
    yield process, http, grpc, metrics
    stop(process, signal.SIGINT)


def wait_ready(process, port, server):
    """Waits until `server` (a subprocess) serves model mlp on HTTP `port`;
    fails the test, with its output, if it exits or takes over 180 s."""
    client = httpclient.InferenceServerClient(f"127.0.0.1:{port}")
    deadline = time.monotonic() + 180
    while True:
        try:
            if client.is_model_ready("mlp"):
                return
        except Exception:  # not listening yet
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"{server} did not serve mlp (exit status {process.poll()}):\n"
                        f"{process.stdout.read()}")
        time.sleep(0.5)


def stop(process, how):
    """Stops a server with signal `how`, and kills it after 60 s."""
    process.send_signal(how)
    try:
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()


def reference(mlp, x):
    y, z = onnxruntime.InferenceSession(str(mlp[0])).run(None, {"x": x})
    return y, z


def infer(protocol, url, x):
    module = httpclient if protocol == "http" else grpcclient
    client = module.InferenceServerClient(url)
    given = module.InferInput("x", list(x.shape), "FP32")
    given.set_data_from_numpy(x)
    result = client.infer("mlp", [given], outputs=[module.InferRequestedOutput("y"),
                                                   module.InferRequestedOutput("z")])
    return result.as_numpy("y"), result.as_numpy("z")


def test_the_server_declares_the_model(server):
    _, http, _, _ = server
    client = httpclient.InferenceServerClient(f"127.0.0.1:{http}")
    config = client.get_model_config("mlp")
    assert config["max_batch_size"] == 16  # --max-batch; the artifacts go to 8
    assert [(i["name"], i["data_type"], i["dims"]) for i in config["input"]] == \
        [("x", "TYPE_FP32", [16])]
    # z is a scalar a row: Triton declares it as one element.
    assert [(o["name"], o["dims"]) for o in config["output"]] == [("y", [8]), ("z", [1])]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize("rows", [1, 3, 8, 13])
def test_requests_match_onnxruntime(server, mlp, protocol, rows):
    _, http, grpc, _ = server
    x = np.random.default_rng(rows).standard_normal((rows, 16)).astype(np.float32)
    y, z = infer(protocol, f"127.0.0.1:{http if protocol == 'http' else grpc}", x)
    expected_y, expected_z = reference(mlp, x)
    np.testing.assert_allclose(y, expected_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z.reshape(-1), expected_z, rtol=1e-5, atol=1e-5)


def test_requests_past_the_largest_batch_are_refused(server):
    _, http, _, _ = server
    with pytest.raises(Exception, match="batch-size must be <= 16"):
        infer("http", f"127.0.0.1:{http}", np.zeros((17, 16), np.float32))


def test_concurrent_clients_each_get_their_own_answer(server, mlp):
    """8 clients x 200 requests, HTTP and gRPC mixed, each request a
    different input: every answer must be its own request's."""
    _, http, grpc, _ = server
    session = onnxruntime.InferenceSession(str(mlp[0]))

    def client(index):
        protocol = "http" if index % 2 else "grpc"
        url = f"127.0.0.1:{http if protocol == 'http' else grpc}"
        rng = np.random.default_rng(1000 + index)
        wrong, latencies = [], []
        for request in range(REQUESTS):
            x = rng.standard_normal((1, 16)).astype(np.float32)
            start = time.perf_counter()
            y, z = infer(protocol, url, x)
            latencies.append(time.perf_counter() - start)
            expected_y, expected_z = session.run(None, {"x": x})
            if not (np.allclose(y, expected_y, rtol=1e-5, atol=1e-5)
                    and np.allclose(z.reshape(-1), expected_z, rtol=1e-5, atol=1e-5)):
                wrong.append(request)
        return wrong, latencies

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(client, range(CLIENTS)))
    elapsed = time.perf_counter() - start
    assert [wrong for wrong, _ in results] == [[]] * CLIENTS
    latencies = np.sort(np.concatenate([l for _, l in results]))
    print(f"\n{CLIENTS} clients x {REQUESTS} requests: {CLIENTS * REQUESTS / elapsed:.0f} "
          f"requests/s, latency p50 {latencies[len(latencies) // 2] * 1e3:.2f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99)] * 1e3:.2f} ms")


def test_the_server_reports_metrics(server):
    _, _, _, metrics = server
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=10).read().decode()
    assert 'nv_inference_request_success{model="mlp",version="1"}' in text


def test_bad_artifacts_are_refused_before_serving(tmp_path, mlp, conv_relu):
    done = subprocess.run([sys.executable, "-m", "kiln.serve", str(mlp[1][0]), str(conv_relu)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "serve different models" in done.stderr
    broken = tmp_path / "broken.kiln"
    broken.write_bytes(b"nothing")
    done = subprocess.run([sys.executable, "-m", "kiln.serve", str(broken)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "not a kiln artifact" in done.stderr


def start_tritonserver(repository, server_dir, ports):
    """A tritonserver of one's own on `repository`: PyTriton's binary and
    Python backend, set up as PyTriton sets them up (its stub for this
    Python, its libraries, this environment's Python first on PATH)."""
    from pytriton.triton import TRITONSERVER_DIST_DIR
    from pytriton.utils.distribution import get_libs_path, get_stub_path

    shutil.copytree(TRITONSERVER_DIST_DIR, server_dir,
                    ignore=shutil.ignore_patterns("python_backend_stubs"))
    shutil.copy(get_stub_path(f"{sys.version_info[0]}.{sys.version_info[1]}"),
                server_dir / "backends" / "python" / "triton_python_backend_stub")
    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    env["LD_LIBRARY_PATH"] = ":".join(filter(None, [env.get("LD_LIBRARY_PATH"),
                                                    str(get_libs_path())]))
    http, grpc, metrics = ports
    return subprocess.Popen(
        [str(server_dir / "bin" / "tritonserver"), f"--model-repository={repository}",
         f"--backend-directory={server_dir / 'backends'}", "--http-address=127.0.0.1",
         f"--http-port={http}", "--grpc-address=127.0.0.1", f"--grpc-port={grpc}",
         "--metrics-address=127.0.0.1", f"--metrics-port={metrics}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def test_a_model_repository_for_one_s_own_tritonserver(mlp, tmp_path):
    """`kiln.serve --repository` writes config.pbtxt and a Python-backend
    model.py beside the artifacts; a plain tritonserver serves them."""
    path, artifacts = mlp
    repository = tmp_path / "repository"
    subprocess.run([sys.executable, "-m", "kiln.serve", *map(str, artifacts), "--name", "mlp",
                    "--instances", "2", "--threads", "1", "--max-batch", "16",
                    "--repository", str(repository)], check=True, capture_output=True)
    config = (repository / "mlp" / "config.pbtxt").read_text()
    assert 'backend: "python"' in config and "max_batch_size: 16" in config
    assert sorted(p.name for p in (repository / "mlp" / "1").iterdir()) == \
        ["mlp_b2.kiln", "mlp_b8.kiln", "model.py"]

    ports = free_ports(3)
    process = start_tritonserver(repository, tmp_path / "tritonserver", ports)
    try:
        wait_ready(process, ports[0], "tritonserver")
        x = np.random.default_rng(7).standard_normal((11, 16)).astype(np.float32)
        expected_y, expected_z = reference(mlp, x)
        for protocol, port in (("http", ports[0]), ("grpc", ports[1])):
            y, z = infer(protocol, f"127.0.0.1:{port}", x)
            np.testing.assert_allclose(y, expected_y, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(z.reshape(-1), expected_z, rtol=1e-5, atol=1e-5)
        # A KServe v2 request in JSON, as `curl` sends it (docs/serving.md).
        body = json.dumps({"inputs": [{"name": "x", "shape": [2, 16], "datatype": "FP32",
                                       "data": x[:2].reshape(-1).tolist()}]}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{ports[0]}/v2/models/mlp/infer",
                                         data=body, headers={"Content-Type": "application/json"})
        answer = json.loads(urllib.request.urlopen(request, timeout=30).read())
        y = next(o for o in answer["outputs"] if o["name"] == "y")
        assert y["shape"] == [2, 8]
        np.testing.assert_allclose(np.array(y["data"], np.float32).reshape(2, 8),
                                   expected_y[:2], rtol=1e-5, atol=1e-5)
    finally:
        stop(process, signal.SIGTERM)
