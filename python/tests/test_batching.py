# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln.serve's batching, without a server: artifacts of one model at
several batch sizes answer any number of rows, as onnxruntime does."""
import numpy as np
import onnxruntime
import pytest

import kiln
from kiln.serve import Instance, Signature


@pytest.mark.parametrize("rows", range(1, 18))
def test_any_number_of_rows_matches_onnxruntime(mlp, rows):
    path, artifacts = mlp
    models = [kiln.Model(a) for a in artifacts]
    signature = Signature(models)
    assert (signature.batched, sorted(signature.batches), signature.max_batch) == (True, [2, 8], 8)
    assert signature.shapes == {"x": (16,), "y": (8,), "z": (1,)}
    instance = Instance(models, signature, "host", 1)
    x = np.random.default_rng(rows).standard_normal((rows, 16)).astype(np.float32)
    outputs = instance(x=x)
    y, z = onnxruntime.InferenceSession(str(path)).run(None, {"x": x})
    np.testing.assert_allclose(outputs["y"], y, rtol=1e-5, atol=1e-5)
    assert outputs["z"].shape == (rows, 1)  # Triton's rows of one element
    np.testing.assert_allclose(outputs["z"].reshape(-1), z, rtol=1e-5, atol=1e-5)


def test_artifacts_that_cannot_serve_together_are_refused(mlp, conv_relu, dtypes_model):
    _, artifacts = mlp
    b2 = kiln.Model(artifacts[0])
    with pytest.raises(kiln.Error, match="serve different models"):
        Signature([b2, kiln.Model(conv_relu)])
    with pytest.raises(kiln.Error, match="same batch"):
        Signature([b2, kiln.Model(artifacts[0])])
    with pytest.raises(kiln.Error, match="bfloat16, which Triton's Python backend cannot carry"):
        Signature([dtypes_model])
    with pytest.raises(kiln.Error, match="no artifact"):
        Signature([])
    # conv_relu's tensors all lead with 1: it serves any batch a row at a time.
    single = Signature([kiln.Model(conv_relu)])
    assert (single.batched, single.max_batch) == (True, 1)


@pytest.mark.parametrize("rows", [1, 2, 5, 8, 13])
def test_one_artifact_of_a_symbolic_batch_serves_every_batch(mlp, work, rows):
    """An artifact compiled with its batch from 2 to 8: every batch Triton
    forms up to 8 is one run, one row padded to the least batch, and more
    rows than 8 several runs."""
    path, _ = mlp
    artifact = work / "mlp_symbolic.kiln"
    if not artifact.exists():
        kiln.compile(path, input_shapes={"x": [(2, 8), 16]}, output=artifact)
    model = kiln.Model(artifact)
    assert model.symbols == [kiln.Symbol("batch", 2, 8, 2)]
    signature = Signature([model])
    assert (signature.batched, signature.max_batch, signature.symbolic.name) == (True, 8, "batch")
    assert signature.shapes == {"x": (16,), "y": (8,), "z": (1,)}
    instance = Instance([model], signature, "host", 1)
    x = np.random.default_rng(rows).standard_normal((rows, 16)).astype(np.float32)
    outputs = instance(x=x)
    y, z = onnxruntime.InferenceSession(str(path)).run(None, {"x": x})
    np.testing.assert_allclose(outputs["y"], y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outputs["z"].reshape(-1), z, rtol=1e-5, atol=1e-5)
    with pytest.raises(kiln.Error, match="serves every batch alone"):
        Signature([model, model])
