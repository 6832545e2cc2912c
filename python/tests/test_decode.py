# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Decoders exported with past key/values (test/models/export_decoders.py:
optimum's text-generation-with-past, GPT-2 and a Llama-style model) run a
prefill and 64 decode steps from one artifact compiled with no
--input-shape, the past growing each step, and match onnxruntime at every
step."""
import os

import numpy as np
import onnxruntime
import pytest

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECODERS = os.path.join(ROOT, "test", "models", "decoders")
STEPS = 64


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def decoder(request, work):
    source = os.path.join(DECODERS, f"{request.param}-past.onnx")
    model = kiln.compile(source, output=work / f"{request.param}-past.kiln")
    reference = onnxruntime.InferenceSession(source, providers=["CPUExecutionProvider"])
    return model, reference


def feed(names, ids, mask, past):
    """One step's inputs: the new tokens, the mask over past and new ones,
    their positions (counting only unmasked tokens, as Hugging Face does)
    and the past."""
    inputs = {"input_ids": ids, "attention_mask": mask, **past}
    if "position_ids" in names:
        positions = np.cumsum(mask, axis=1) - 1
        positions[mask == 0] = 1
        inputs["position_ids"] = positions[:, -ids.shape[1]:].astype(np.int64)
    return inputs


def largest_error(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-6))


def test_prefill_then_decode_steps(decoder):
    model, reference = decoder
    symbols = {symbol.name: symbol for symbol in model.symbols}
    assert symbols["past_sequence_length"].min == 0
    names = [i.name for i in reference.get_inputs()]
    outputs = [o.name for o in reference.get_outputs()]
    pasts = {name: name.replace("past_key_values", "present")
             for name in names if name.startswith("past_key_values")}
    shapes = {i.name: i.shape for i in reference.get_inputs()}

    rng = np.random.default_rng(7)
    batch, prompt = 2, 5
    ids = rng.integers(0, 256, (batch, prompt)).astype(np.int64)
    mask = np.ones((batch, prompt), np.int64)
    mask[1, :2] = 0  # the second prompt is shorter, padded on the left
    # A prefill has a past of length 0.
    empty = {name: np.zeros((batch, shapes[name][1], 0, shapes[name][3]), np.float32)
             for name in pasts}
    ours, theirs = dict(empty), dict(empty)
    session = model.session()
    for step in range(STEPS + 1):
        got = session.run(feed(names, ids, mask, ours))
        want = dict(zip(outputs, reference.run(None, feed(names, ids, mask, theirs))))
        past = mask.shape[1] - ids.shape[1]
        for name in outputs:
            assert got[name].shape == want[name].shape, (step, name)
            assert largest_error(got[name], want[name]) < 1e-4, (step, past, name)
        assert got["present.0.key"].shape[2] == past + ids.shape[1]
        ours = {name: got[present] for name, present in pasts.items()}
        theirs = {name: want[present] for name, present in pasts.items()}
        ids = want["logits"][:, -1:].argmax(-1).astype(np.int64)
        mask = np.concatenate([mask, np.ones((batch, 1), np.int64)], axis=1)


def test_mask_must_cover_past_and_new_tokens(decoder):
    model, reference = decoder
    names = [i.name for i in reference.get_inputs()]
    shapes = {i.name: i.shape for i in reference.get_inputs()}
    past = {name: np.zeros((1, shapes[name][1], 3, shapes[name][3]), np.float32)
            for name in names if name.startswith("past_key_values")}
    ids, mask = np.zeros((1, 1), np.int64), np.ones((1, 3), np.int64)
    with pytest.raises(kiln.Error, match=r"input 'attention_mask' has shape 1x3; at these sizes "
                       r"the model expects 1x4 \(.*\): dimension 1 should be 4"):
        model.session().run(feed(names, ids, mask, past))
