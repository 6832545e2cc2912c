# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln.Model and kiln.Session: loading, describing, running, errors,
threads and memory."""
import os
import resource
import threading

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest

import kiln
from conftest import DTYPES, ROOT
from onnx import TensorProto, helper, numpy_helper


def test_a_model_describes_itself(conv_relu):
    model = kiln.Model(conv_relu)
    [info] = model.inputs
    assert (info.name, info.shape, info.dtype) == ("input", (1, 3, 32, 32), np.float32)
    [out] = model.outputs
    assert (out.name, out.shape, out.dtype) == ("output", (1, 16, 32, 32), np.float32)
    assert model.targets == ["x86-64-v4", "x86-64-v3"]
    assert "TensorInfo(name='input', shape=(1, 3, 32, 32), dtype=dtype('float32'))" in repr(model)


def test_runs_match_onnxruntime(conv_relu, conv_relu_onnx, image):
    session = kiln.Model(conv_relu).session()
    assert session.device.startswith("host (x86-64-v")
    assert session.target in ("x86-64-v4", "x86-64-v3")
    outputs = session.run({"input": image})
    [expected] = onnxruntime.InferenceSession(str(conv_relu_onnx)).run(None, {"input": image})
    assert list(outputs) == ["output"]
    np.testing.assert_allclose(outputs["output"], expected, rtol=1e-5, atol=1e-5)


def test_a_model_loads_from_bytes(conv_relu, image):
    from_file = kiln.Model(conv_relu).session().run({"input": image})["output"]
    from_bytes = kiln.Model(conv_relu.read_bytes()).session().run({"input": image})["output"]
    assert np.array_equal(from_file, from_bytes)


def test_every_dtype_goes_through(dtypes_model):
    session = dtypes_model.session()
    rng = np.random.default_rng(1)
    inputs = {}
    for name in DTYPES:
        dtype = np.dtype(getattr(ml_dtypes, name, None) or name)
        if dtype == np.bool_:
            value = rng.integers(0, 2, (2, 3)).astype(bool)
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            value = rng.integers(info.min, info.max, (2, 3), dtype=dtype, endpoint=True)
        else:
            value = (rng.standard_normal((2, 3)) * 8).astype(dtype)
        inputs[f"x_{name}"] = value
    outputs = session.run(inputs)
    for name in DTYPES:
        result, given = outputs[f"y_{name}"], inputs[f"x_{name}"]
        assert result.dtype == given.dtype, name
        assert result.tobytes() == given.tobytes(), name
    infos = {info.name: info.dtype for info in dtypes_model.outputs}
    assert infos["y_bfloat16"] == np.dtype(ml_dtypes.bfloat16)
    assert infos["y_float8_e4m3fn"] == np.dtype(ml_dtypes.float8_e4m3fn)


def test_noncontiguous_inputs_are_read_as_their_values(conv_relu, image):
    session = kiln.Model(conv_relu).session()
    expected = session.run({"input": image})["output"]
    wide = np.zeros((1, 3, 32, 64), np.float32)
    wide[..., ::2] = image
    strided = wide[..., ::2]
    assert not strided.flags.c_contiguous
    assert np.array_equal(session.run({"input": strided})["output"], expected)
    fortran = np.asfortranarray(image)
    assert np.array_equal(session.run({"input": fortran})["output"], expected)


def test_outputs_are_written_in_place(conv_relu, image):
    session = kiln.Model(conv_relu).session()
    expected = session.run({"input": image})["output"]
    mine = np.full((1, 16, 32, 32), np.nan, np.float32)
    result = session.run({"input": image}, outputs={"output": mine})
    assert result["output"] is mine
    assert np.array_equal(mine, expected)
    # Each run returns arrays of its own.
    first = session.run({"input": image})["output"]
    second = session.run({"input": image * 2})["output"]
    assert not np.shares_memory(first, second)
    assert np.array_equal(first, expected)


def raises(code, match, call):
    with pytest.raises(kiln.Error, match=match) as caught:
        call()
    assert caught.value.code == code
    return caught.value


def test_wrong_inputs_raise_with_the_runtime_s_status(conv_relu, image):
    session = kiln.Model(conv_relu).session()
    invalid = kiln.Status.INVALID_ARGUMENT
    raises(invalid, "no input named 'picture'", lambda: session.run({"picture": image}))
    raises(invalid, "input 'input'", lambda: session.run({}))
    raises(invalid, "wrong shape; the model expects 1x3x32x32",
           lambda: session.run({"input": image[:, :2]}))
    raises(invalid, "has dtype f64; the model expects f32",
           lambda: session.run({"input": image.astype(np.float64)}))
    raises(invalid, "complex64, which no kiln model takes",
           lambda: session.run({"input": image.astype(np.complex64)}))
    raises(invalid, "input names must be strings", lambda: session.run({1: image}))
    with pytest.raises(ValueError):
        session.run({"input": [[1, 2], [3]]})  # not an array NumPy can make


def test_wrong_outputs_raise(conv_relu, image):
    session = kiln.Model(conv_relu).session()
    invalid = kiln.Status.INVALID_ARGUMENT
    shape = (1, 16, 32, 32)
    raises(invalid, "must be a NumPy array, not list",
           lambda: session.run({"input": image}, outputs={"output": []}))
    raises(invalid, "array of float64, expected float32",
           lambda: session.run({"input": image}, outputs={"output": np.empty(shape)}))
    raises(invalid, "C-contiguous",
           lambda: session.run({"input": image},
                               outputs={"output": np.empty(shape, np.float32, order="F")}))
    readonly = np.empty(shape, np.float32)
    readonly.flags.writeable = False
    raises(invalid, "writable", lambda: session.run({"input": image},
                                                    outputs={"output": readonly}))
    raises(invalid, "wrong shape|byte size",
           lambda: session.run({"input": image}, outputs={"output": np.empty((2, 2), np.float32)}))
    raises(invalid, "no output named 'other'",
           lambda: session.run({"input": image}, outputs={"other": np.empty(shape, np.float32)}))


def test_bad_models_and_devices_raise(conv_relu, tmp_path):
    raises(kiln.Status.NOT_FOUND, "cannot open", lambda: kiln.Model(tmp_path / "missing.kiln"))
    raises(kiln.Status.DATA_LOSS, "not a kiln artifact", lambda: kiln.Model(b"not an artifact"))
    data = bytearray(conv_relu.read_bytes())
    data[len(data) // 2] ^= 0xFF
    raises(kiln.Status.DATA_LOSS, "digest", lambda: kiln.Model(bytes(data)))
    model = kiln.Model(conv_relu)
    raises(kiln.Status.UNAVAILABLE, "cuda:0", lambda: model.session("cuda:0"))
    raises(kiln.Status.UNAVAILABLE, "'tpu:0' is not available", lambda: model.session("tpu:0"))
    raises(kiln.Status.INVALID_ARGUMENT, "32-byte Ed25519",
           lambda: kiln.Model(conv_relu, trusted_keys=[b"short"]))
    error = raises(kiln.Status.PERMISSION_DENIED, "not signed",
                   lambda: kiln.Model(conv_relu, trusted_keys=[bytes(32)]))
    assert str(error).endswith("(PERMISSION_DENIED)")


def test_signed_artifacts_load_with_their_key(conv_relu, tmp_path, image):
    import subprocess
    key, public = tmp_path / "key.pem", tmp_path / "key.pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(public)],
                   check=True)
    signed = tmp_path / "signed.kiln"
    subprocess.run([kiln.compiler_path(), "sign", str(conv_relu), "--key", str(key),
                    "-o", str(signed)], check=True, capture_output=True)
    trusted = kiln.read_public_key(public)
    assert len(trusted) == 32
    outputs = kiln.Model(signed, trusted_keys=[trusted]).session().run({"input": image})
    assert outputs["output"].shape == (1, 16, 32, 32)
    raises(kiln.Status.PERMISSION_DENIED, "which is not a trusted key",
           lambda: kiln.Model(signed, trusted_keys=[bytes(32)]))
    with pytest.raises(ValueError, match="not a PEM public key"):
        kiln.read_public_key(conv_relu)


def test_threads_sharing_a_model_get_identical_results(conv_relu):
    model = kiln.Model(conv_relu)
    rng = np.random.default_rng(2)
    images = [rng.standard_normal((1, 3, 32, 32), dtype=np.float32) for _ in range(4)]
    reference = model.session(threads=1)
    expected = [reference.run({"input": image})["output"] for image in images]
    shared = model.session(threads=1)  # runs from several threads take turns
    mismatches = []

    def worker(index):
        own = model.session(threads=1)
        for run in range(50):
            which = (index + run) % len(images)
            session = own if run % 2 else shared
            result = session.run({"input": images[which]})["output"]
            if not np.array_equal(result, expected[which]):
                mismatches.append((index, run))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert mismatches == []


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def test_ten_thousand_runs_do_not_leak(conv_relu, image):
    model = kiln.Model(conv_relu)
    session = model.session(threads=1)
    out = np.empty((1, 16, 32, 32), np.float32)
    for _ in range(1000):  # warm up: allocator pools, caches
        session.run({"input": image})
    before = rss_bytes()
    for run in range(10_000):
        if run % 2:
            session.run({"input": image}, outputs={"output": out})
        else:
            session.run({"input": image})
    for _ in range(200):
        model.session(threads=1).run({"input": image})
        kiln.Model(conv_relu)
    grown = rss_bytes() - before
    # 10,000 outputs of 64 KiB kept would be 640 MiB.
    assert grown < 16 << 20, f"RSS grew by {grown / 2**20:.1f} MiB over 10,000 runs"


def test_a_symbolic_model_runs_at_every_size(work):
    """One artifact, any batch and sequence in its ranges: outputs of the
    run's shape, dimensions named as onnxruntime names them, and sizes out
    of range refused."""
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((8, 5)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]),
             helper.make_node("Concat", ["x", "x"], ["twice"], axis=1)]
    graph = helper.make_graph(
        nodes, "symbolic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", 5]),
         helper.make_tensor_value_info("twice", TensorProto.FLOAT, ["batch", None, 8])],
        [numpy_helper.from_array(weight, "w")])
    source = work / "symbolic.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), source)
    model = kiln.compile(source, input_shapes={"x": [(1, 4), "1..16", 8]})
    assert model.inputs[0].shape == ("batch", "sequence", 8)
    assert model.outputs[1].shape == ("batch", "sequence * 2", 8)
    session = model.session()
    for batch, sequence in [(4, 16), (1, 1), (3, 7)]:
        x = rng.standard_normal((batch, sequence, 8)).astype(np.float32)
        outputs = session.run({"x": x})
        assert outputs["y"].shape == (batch, sequence, 5)
        np.testing.assert_allclose(outputs["y"], x @ weight, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(outputs["twice"], np.concatenate([x, x], axis=1))
    given = np.empty((3, 7, 5), np.float32)
    assert session.run({"x": x}, {"y": given})["y"] is given
    np.testing.assert_allclose(given, x @ weight, rtol=1e-5, atol=1e-5)
    with pytest.raises(kiln.Error, match="the model takes 'batch' from 1 to 4"):
        session.run({"x": np.zeros((5, 2, 8), np.float32)})


def test_a_cnn_runs_at_every_image_size(work):
    """Convolutions (padded, strided, depthwise) and pooling over an image
    a run gives match onnxruntime at each size, from one artifact."""
    rng = np.random.default_rng(4)

    def weight(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("MaxPool", ["c2"], ["p1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["c3"], ["p2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=1),
        helper.make_node("GlobalAveragePool", ["p2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "images",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16, 1, 1]),
         helper.make_tensor_value_info("p2", TensorProto.FLOAT, None)],
        [weight("w1", 8, 3, 3, 3), weight("b1", 8), weight("w2", 8, 1, 3, 3),
         weight("w3", 16, 8, 3, 3)])
    source = work / "images.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), source)
    model = kiln.compile(source, input_shapes={"x": [(1, 2), 3, "8..40", "8..40"]})
    session = model.session()
    peer = onnxruntime.InferenceSession(str(source))
    for batch, height, width in [(2, 40, 40), (1, 8, 8), (2, 17, 30), (1, 33, 9)]:
        x = rng.standard_normal((batch, 3, height, width)).astype(np.float32)
        outputs = session.run({"x": x})
        expected = dict(zip(["y", "p2"], peer.run(["y", "p2"], {"x": x})))
        for name in ("y", "p2"):
            assert outputs[name].shape == expected[name].shape
            np.testing.assert_allclose(outputs[name], expected[name], rtol=1e-4, atol=1e-4)


def test_values_of_the_sizes_alone_follow_every_change_of_size(work):
    """What a model computes from its sizes alone (T5's relative-position
    biases) is computed once a shape and kept: one session, its sizes
    changing from run to run and coming back, matches onnxruntime at every
    run."""
    source = os.path.join(ROOT, "test", "models", "transformers", "t5_encoder.onnx")
    model = kiln.compile(source, output=work / "t5_encoder-sizes.kiln")
    session = model.session()
    peer = onnxruntime.InferenceSession(source)
    rng = np.random.default_rng(7)
    for batch, sequence in [(1, 7), (2, 7), (1, 33), (1, 7), (3, 33), (3, 33)]:
        feeds = {"input_ids": rng.integers(0, 256, (batch, sequence), dtype=np.int64),
                 "attention_mask": np.ones((batch, sequence), np.int64)}
        feeds["attention_mask"][0, sequence // 2:] = 0
        expected = peer.run(["last_hidden_state"], feeds)[0]
        got = session.run(feeds)["last_hidden_state"]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
