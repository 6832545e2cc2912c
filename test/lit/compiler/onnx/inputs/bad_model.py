#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes one malformed ONNX model (or file) for the importer's error tests.

    bad_model.py KIND OUT

OUT is the .onnx path; kinds that need external data write it beside OUT.
Every kind is a small, readable construction, so no binary is checked in.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def graph_model(nodes, inputs, outputs, initializers=(), opset=17, domains=()):
    graph = helper.make_graph(nodes, "bad", inputs, outputs, list(initializers))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def relu_model(**kwargs):
    return graph_model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                       [tensor("x", [2, 3])], [tensor("y", [2, 3])], **kwargs)


def external_model(out, location, offset, length, file_bytes, where="."):
    """An Add reading a [4] float initializer from external data; the data
    file is written to `where`, relative to the model's folder."""
    weight = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            weight.external_data.add(key=key, value=str(value))
    if file_bytes is not None:
        folder = os.path.join(os.path.dirname(os.path.abspath(out)), where)
        with open(os.path.join(folder, "weights.bin"), "wb") as f:
            f.write(file_bytes)
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add_weights")
    return graph_model([node], [tensor("x", [4])], [tensor("y", [4])], [weight])


def build(kind, out):
    if kind == "empty":
        return b""
    if kind == "not-onnx":
        return b"This is a text file, not a protobuf.\n" * 4
    if kind == "truncated":
        weight = numpy_helper.from_array(np.ones([64, 64], np.float32), "w")
        node = helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")
        data = graph_model([node], [tensor("x", [1, 64])], [tensor("y", [1, 64])],
                           [weight]).SerializeToString()
        return data[: len(data) // 2]
    if kind == "unsupported":
        nodes = [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("StringNormalizer", ["a"], ["b"], name="strings_1"),
            helper.make_node("StringNormalizer", ["b"], ["c"], name="strings_2"),
            helper.make_node("Det", ["c"], ["d"], name="det"),
            helper.make_node("FusedMatMul", ["c", "c"], ["y"], name="fused", domain="com.microsoft"),
        ]
        return graph_model(nodes, [tensor("x", [2, 2])], [tensor("y", [2, 2])],
                           domains=["com.microsoft"])
    if kind == "old-opset":
        # Slice takes its bounds as attributes before opset 10; without
        # them ONNX's version converter cannot move them into inputs.
        return graph_model([helper.make_node("Slice", ["x"], ["y"], name="slice")],
                           [tensor("x", [2, 3])], [tensor("y", [2, 3])], opset=9)
    if kind == "old-opset-undefined-output":
        # An If branch's output that nothing defines: ONNX's checker lets it
        # through, and its version converter dereferences null (found by
        # fuzzing, at the top level, which kiln's own checks now catch
        # first).
        branch = helper.make_graph([], "branch", [], [tensor("z", [2, 3])])
        node = helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch,
                                else_branch=branch)
        return graph_model([node], [tensor("c", [], TensorProto.BOOL)], [tensor("y", [2, 3])],
                           opset=7)
    if kind == "new-opset":
        return relu_model(opset=30)
    if kind == "cycle":
        nodes = [
            helper.make_node("Add", ["x", "b"], ["a"], name="first"),
            helper.make_node("Relu", ["a"], ["b"], name="second"),
            helper.make_node("Relu", ["a"], ["y"], name="out"),
        ]
        return graph_model(nodes, [tensor("x", [2])], [tensor("y", [2])])
    if kind == "undefined-input":
        node = helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")
        return graph_model([node], [tensor("x", [2])], [tensor("y", [2])])
    if kind == "external-escape":
        return external_model(out, "../weights.bin", 0, 16, np.ones(4, np.float32).tobytes(),
                              where="..")
    if kind == "external-symlink":
        # A link inside the folder that points out of it.
        outside = os.path.join(os.path.dirname(os.path.abspath(out)), "..", "outside.bin")
        with open(outside, "wb") as f:
            f.write(np.ones(4, np.float32).tobytes())
        link = os.path.join(os.path.dirname(os.path.abspath(out)), "link.bin")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(outside, link)
        return external_model(out, "link.bin", 0, 16, None)
    if kind == "external-ok":
        return external_model(out, "weights.bin", 0, 16, np.arange(4, dtype=np.float32).tobytes())
    if kind == "external-absolute":
        return external_model(out, "/etc/hostname", 0, 16, None)
    if kind == "external-past-end":
        return external_model(out, "weights.bin", 8, 16, np.ones(4, np.float32).tobytes())
    if kind == "short-raw-data":
        weight = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 4])
        weight.raw_data = np.ones(10, np.float32).tobytes()
        node = helper.make_node("Add", ["x", "w"], ["y"], name="add_weights")
        return graph_model([node], [tensor("x", [4, 4])], [tensor("y", [4, 4])], [weight])
    if kind == "overflowing-dims":
        weight = TensorProto(name="huge", data_type=TensorProto.FLOAT,
                             dims=[2**40, 2**40, 2**20])
        node = helper.make_node("Add", ["x", "huge"], ["y"], name="add_huge")
        return graph_model([node], [tensor("x", [1])], [tensor("y", [1])], [weight])
    if kind == "overflowing-input":
        return graph_model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                           [tensor("x", [2**40, 2**40])], [tensor("y", [2**40, 2**40])])
    if kind == "overflowing-result":
        # Each input fits; their product's element count does not.
        node = helper.make_node("MatMul", ["a", "b"], ["y"], name="outer")
        return graph_model([node], [tensor("a", [2**32, 1]), tensor("b", [1, 2**32])],
                           [tensor("y", [2**32, 2**32])])
    if kind == "unnamed-output":
        empty = numpy_helper.from_array(np.ones([2], np.float32), "")
        return graph_model([], [], [tensor("", [2])], [empty])
    if kind == "symbolic-input":
        return graph_model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                           [tensor("x", ["batch", 3])], [tensor("y", ["batch", 3])])
    if kind == "symbolic-window":
        # A 3x3 window over an image of symbolic height and width.
        weight = numpy_helper.from_array(np.ones([4, 3, 3, 3], np.float32), "w")
        return graph_model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                           [tensor("x", [1, 3, "height", "width"])], [tensor("y", None)], [weight])
    if kind == "symbolic-lstm":
        # An LSTM unrolls over its sequence, which must be static.
        w = numpy_helper.from_array(np.ones([1, 16, 4], np.float32), "w")
        r = numpy_helper.from_array(np.ones([1, 16, 4], np.float32), "r")
        return graph_model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=4,
                                             name="lstm")],
                           [tensor("x", ["sequence", 1, 4])], [tensor("y", None)], [w, r])
    if kind == "paddle-input":
        # Paddle's exporters write an open dimension as -1.
        return graph_model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                           [tensor("x", [-1, 3])], [tensor("y", [-1, 3])])
    if kind == "bad-shape":
        # A Reshape to a shape with a different element count.
        shape = numpy_helper.from_array(np.array([5, 5], np.int64), "shape")
        node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="/encoder/Reshape")
        return graph_model([node], [tensor("x", [2, 3])], [tensor("y", [5, 5])], [shape])
    if kind == "dynamic-reshape":
        node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")
        return graph_model([node], [tensor("x", [2, 3]), tensor("shape", [2], TensorProto.INT64)],
                           [tensor("y", [3, 2])])
    if kind == "duplicate-output":
        return graph_model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                           [tensor("x", [2])], [tensor("y", [2]), tensor("y", [2])])
    if kind == "duplicate-input":
        return graph_model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                           [tensor("x", [2]), tensor("x", [2])], [tensor("y", [2])])
    if kind in ("shadowed-input", "shadowed-input-old", "shadowed-input-shape"):
        # A graph input with an initializer of the same name: an input with a
        # default from IR version 4, a weight listed as ONNX required before.
        weight = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
        node = helper.make_node("Add", ["x", "w"], ["y"], name="add_weights")
        declared = [4, 1] if kind == "shadowed-input-shape" else [4]
        model = graph_model([node], [tensor("x", [4]), tensor("w", declared)],
                            [tensor("y", [4])], [weight])
        if kind == "shadowed-input-old":
            model.ir_version = 3
        return model
    raise SystemExit(f"unknown kind '{kind}'")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    result = build(kind, out)
    data = result if isinstance(result, bytes) else result.SerializeToString()
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
