# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln.compile and kiln.calibrate, through the kiln compiler."""
import json

import numpy as np
import pytest

import kiln


def test_compile_returns_the_model(conv_relu_onnx, image, tmp_path):
    model = kiln.compile(conv_relu_onnx, precision="bf16")
    assert [info.name for info in model.inputs] == ["input"]
    outputs = model.session().run({"input": image})
    reference = kiln.compile(conv_relu_onnx).session().run({"input": image})
    error = np.abs(outputs["output"] - reference["output"]).max()
    assert 0 < error < 0.05  # bf16 operands, f32 sums
    written = tmp_path / "written.kiln"
    kiln.compile(conv_relu_onnx, targets=["host", "gfx942"], output=written)
    assert kiln.Model(written).targets == ["x86-64-v4", "x86-64-v3", "gfx942"]


def test_compile_errors_name_the_problem(conv_relu_onnx, tmp_path):
    with pytest.raises(kiln.CompileError, match="unknown precision 'fp4'") as caught:
        kiln.compile(conv_relu_onnx, precision="fp4")
    assert caught.value.code == kiln.Status.INVALID_ARGUMENT
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07garbage")
    with pytest.raises(kiln.CompileError, match="broken.onnx"):
        kiln.compile(broken)
    with pytest.raises(kiln.CompileError, match="fp8 needs the activations' scales"):
        kiln.compile(conv_relu_onnx, precision="fp8")


def test_calibrate_then_compile_fp8(conv_relu_onnx, tmp_path):
    rng = np.random.default_rng(3)
    samples = [{"input": rng.standard_normal((1, 3, 32, 32), dtype=np.float32)}
               for _ in range(3)]
    scales = kiln.calibrate(conv_relu_onnx, samples, output=tmp_path / "scales.json")
    recorded = json.loads(open(scales).read())
    assert recorded["samples"] == 3
    largest = max(np.abs(sample["input"]).max() for sample in samples)
    assert recorded["tensors"]["input"] == pytest.approx(float(largest))
    model = kiln.compile(conv_relu_onnx, precision="fp8", calibration=scales)
    image = samples[0]["input"]
    fp8 = model.session().run({"input": image})["output"]
    fp32 = kiln.compile(conv_relu_onnx).session().run({"input": image})["output"]
    assert np.abs(fp8 - fp32).max() < 0.1 * np.abs(fp32).max()
