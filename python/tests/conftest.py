# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fixtures: ONNX models made here, compiled by the kiln compiler that
kiln.compiler_path() finds (CTest sets KILN_COMPILER to the build's)."""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Every dtype the runtime has, with ONNX's type and NumPy's (ml_dtypes').
DTYPES = {
    "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16, "float64": TensorProto.DOUBLE,
    "int8": TensorProto.INT8, "int16": TensorProto.INT16, "int32": TensorProto.INT32,
    "int64": TensorProto.INT64, "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16,
    "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64, "bool": TensorProto.BOOL,
    "float8_e4m3fn": TensorProto.FLOAT8E4M3FN, "float8_e5m2": TensorProto.FLOAT8E5M2,
}


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("kiln")


@pytest.fixture(scope="session")
def conv_relu_onnx(work):
    subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "generate.py"),
                    "--out", str(work), "--models", "conv_relu"], check=True,
                   capture_output=True)
    return work / "conv_relu.onnx"


@pytest.fixture(scope="session")
def conv_relu(work, conv_relu_onnx):
    path = work / "conv_relu.kiln"
    kiln.compile(conv_relu_onnx, output=path)
    return path


@pytest.fixture(scope="session")
def dtypes_model(work):
    """y_T = Identity(x_T) for every dtype T, each 2x3."""
    nodes, inputs, outputs = [], [], []
    for name, onnx_type in DTYPES.items():
        nodes.append(helper.make_node("Identity", [f"x_{name}"], [f"y_{name}"]))
        inputs.append(helper.make_tensor_value_info(f"x_{name}", onnx_type, [2, 3]))
        outputs.append(helper.make_tensor_value_info(f"y_{name}", onnx_type, [2, 3]))
    graph = helper.make_graph(nodes, "dtypes", inputs, outputs)
    source = work / "dtypes.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), source)
    return kiln.compile(source, output=work / "dtypes.kiln")


@pytest.fixture
def image():
    return np.random.default_rng(0).standard_normal((1, 3, 32, 32), dtype=np.float32)


@pytest.fixture(scope="session")
def mlp(work):
    """y = Relu(x W + b), z = sum of x's row: x of shape [batch, 16]."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]),
         helper.make_node("Add", ["xw", "b"], ["pre"]),
         helper.make_node("Relu", ["pre"], ["y"]),
         helper.make_node("ReduceSum", ["x", "axes"], ["z"], keepdims=0)],
        "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch"])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(np.array([1], np.int64), "axes")])
    path = work / "mlp.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    artifacts = []
    for batch in (2, 8):  # 1 row runs padded to 2; 13 as 8, 2, 2 and 1 padded
        artifact = work / f"mlp_b{batch}.kiln"
        kiln.compile(path, input_shapes={"x": [batch, 16]}, output=artifact)
        artifacts.append(artifact)
    return path, artifacts
