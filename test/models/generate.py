#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generate synthetic ONNX test models for the kiln importer.

The models reproduce the *graph structure* that ``torch.onnx.export``
(opset 17) produces for three well-known networks (and one tiny one), filled with deterministic
random weights:

  conv_relu    one 3x3 Conv with bias and a Relu (the README's example)
  resnet50     torchvision ResNet-50, eval export (BatchNorm folded into Conv)
  mobilenetv2  torchvision MobileNetV2, BatchNormalization nodes kept,
               ReLU6 as Clip(x, min, max), inference-mode Dropout
  bert         HuggingFace BERT-base encoder (BertModel.last_hidden_state),
               exported without constant folding of the shape logic, with
               LayerNorm and GELU decomposed into primitive ops

Neither torch nor the original checkpoints are needed: graphs are assembled
with ``onnx.helper`` and every weight is an initializer carrying ``raw_data``.
Node, value and initializer names follow the exporter's conventions
("/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/conv1/Conv_output_0",
"onnx::Conv_123", "encoder.layer.0.attention.self.query.bias", ...).

It is one file, longer than most, because lit tests, the benchmarks and the
GPU check run it as a script: one builder function per model, over shared
helpers for the graph and the weights.

Usage:
    python3 test/models/generate.py --out DIR [--models resnet50,mobilenetv2,bert]
                                    [--seed 0] [--layers N] [--vocab N] [--verify]
"""

import argparse
import contextlib
import os
import sys
import time
from collections import Counter

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # what torch.onnx.export writes for opset 17

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64

# The value HuggingFace multiplies the inverted attention mask by:
# torch.finfo(torch.float32).min.
FLOAT32_MIN = np.finfo(np.float32).min


# ---------------------------------------------------------------------------
# Graph construction helpers
# ---------------------------------------------------------------------------


def torch_scope_component(qualname):
    """Scope component the exporter uses for a module with this qualified name.

    The exporter names a module by its qualified name starting from the last
    non-numeric part, so "layer1.0.conv1" -> "conv1", "layer1.0" -> "layer1.0",
    "features.1.conv.0.0" -> "conv.0.0" and "encoder.layer.0" -> "layer.0".
    """
    parts = qualname.split(".")
    start = max(i for i, part in enumerate(parts) if not part.isdigit())
    return ".".join(parts[start:])


class GraphBuilder:
    """Collects nodes and initializers, naming them the way the exporter does.

    Nodes created inside ``with builder.module("name"):`` blocks get names like
    "/scope/component/OpType" (with "_1", "_2", ... for repeats) and their
    outputs "<node name>_output_<i>".  Parameters created with ``param`` get
    the module's qualified name ("layer1.0.conv1.weight"); ``anon_param``
    gives the "onnx::<OpType>_<id>" names the exporter uses for tensors it
    created itself (folded or transposed weights).
    """

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._modules = []  # stack of (qualified name, scope component)
        self._node_name_counts = Counter()
        self._next_value_id = 100  # counter behind "onnx::Op_<id>" names

    # -- naming ------------------------------------------------------------

    @contextlib.contextmanager
    def module(self, name):
        """Enter a submodule; ``name`` is relative to the current module."""
        parent = self._modules[-1][0] + "." if self._modules else ""
        qualname = parent + name
        self._modules.append((qualname, torch_scope_component(qualname)))
        try:
            yield
        finally:
            self._modules.pop()

    def _qualify(self, name):
        return self._modules[-1][0] + "." + name if self._modules else name

    def _unique_node_name(self, op_type):
        scope = "".join("/" + component for _, component in self._modules)
        base = f"{scope}/{op_type}"
        count = self._node_name_counts[base]
        self._node_name_counts[base] += 1
        return base if count == 0 else f"{base}_{count}"

    # -- graph contents ----------------------------------------------------

    def add_input(self, name, elem_type, shape):
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def add_output(self, name, elem_type, shape):
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def op(self, op_type, inputs, outputs=None, num_outputs=1, **attrs):
        """Append a node; returns its output name (or list of names)."""
        name = self._unique_node_name(op_type)
        if outputs is None:
            outputs = [f"{name}_output_{i}" for i in range(num_outputs)]
        node = helper.make_node(op_type, list(inputs), list(outputs), name=name, **attrs)
        self.nodes.append(node)
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def const(self, value, dtype):
        """A Constant node in the current scope (the unfolded exporter style)."""
        tensor = numpy_helper.from_array(np.array(value, dtype=dtype))
        return self.op("Constant", [], value=tensor)

    def param(self, name, array):
        """Initializer named after the current module ("<module>.<name>")."""
        return self._add_initializer(self._qualify(name), array)

    def anon_param(self, op_type, array):
        """Initializer with an exporter-generated name ("onnx::MatMul_123")."""
        name = f"onnx::{op_type}_{self._next_value_id}"
        self._next_value_id += 1
        return self._add_initializer(name, array)

    def _add_initializer(self, name, array):
        # from_array stores the data in TensorProto.raw_data.
        self.initializers.append(numpy_helper.from_array(array, name=name))
        return name

    # -- random weights ----------------------------------------------------

    def normal(self, shape, std, mean=0.0):
        """float32 normal samples without a float64 intermediate."""
        sample = self.rng.standard_normal(shape, dtype=np.float32)
        sample *= np.float32(std)  # in place: the BERT tables are large
        if mean:
            sample += np.float32(mean)
        return sample

    def uniform(self, shape, low, high):
        return self.rng.uniform(low, high, shape).astype(np.float32)

    # -- output --------------------------------------------------------------

    def build(self, graph_name, doc):
        graph = helper.make_graph(
            self.nodes, graph_name, self.inputs, self.outputs, initializer=self.initializers
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="kiln-test-models",
            doc_string=doc,
        )
        model.ir_version = IR_VERSION
        return model


# ---------------------------------------------------------------------------
# Shared layer helpers
# ---------------------------------------------------------------------------


def random_batchnorm_stats(b, channels, gamma_range=(0.8, 1.2)):
    """Plausible BatchNorm parameters: gamma, beta, running mean/var (var > 0)."""
    gamma = b.uniform(channels, *gamma_range)
    beta = b.normal(channels, 0.05)
    mean = b.normal(channels, 0.05)
    var = b.uniform(channels, 0.8, 1.2)
    return gamma, beta, mean, var


def conv_attrs(kernel, stride, pad, group=1):
    """The attribute set torch always writes on Conv nodes."""
    return dict(
        dilations=[1, 1],
        group=group,
        kernel_shape=[kernel, kernel],
        pads=[pad] * 4,
        strides=[stride, stride],
    )


def he_conv_weight(b, cout, cin_per_group, kernel):
    """He-normal conv weight (std sqrt(2 / fan_in)), keeps ReLU nets stable."""
    fan_in = cin_per_group * kernel * kernel
    return b.normal((cout, cin_per_group, kernel, kernel), np.sqrt(2.0 / fan_in))


def linear_gemm(b, x, in_features, out_features, output_name):
    """nn.Linear on a 2-D input: Gemm(x, W, b, transB=1), torch default init."""
    bound = 1.0 / np.sqrt(in_features)
    weight = b.param("weight", b.uniform((out_features, in_features), -bound, bound))
    bias = b.param("bias", b.uniform(out_features, -bound, bound))
    return b.op("Gemm", [x, weight, bias], outputs=[output_name], alpha=1.0, beta=1.0, transB=1)


# ---------------------------------------------------------------------------
# ResNet-50 (torchvision), BatchNorm folded into Conv
# ---------------------------------------------------------------------------


def folded_conv(b, x, cin, cout, kernel, stride=1, pad=0, gamma_range=(0.8, 1.2)):
    """Conv followed by eval-mode BatchNorm, folded the way the exporter does.

    The exporter replaces conv(x) -> bn with a single Conv whose weight is
    W * gamma / sqrt(var + eps) and whose bias is beta - mean * that scale;
    both become anonymous "onnx::Conv_<id>" initializers.
    """
    weight = he_conv_weight(b, cout, cin, kernel)
    gamma, beta, mean, var = random_batchnorm_stats(b, cout, gamma_range)
    scale = gamma / np.sqrt(var + np.float32(1e-5))
    folded_weight = weight * scale[:, None, None, None]
    folded_bias = beta - mean * scale
    w = b.anon_param("Conv", folded_weight.astype(np.float32))
    bias = b.anon_param("Conv", folded_bias.astype(np.float32))
    return b.op("Conv", [x, w, bias], **conv_attrs(kernel, stride, pad))


def relu(b, x, module_name):
    with b.module(module_name):
        return b.op("Relu", [x])


def bottleneck(b, x, cin, planes, stride, with_downsample):
    """torchvision Bottleneck (v1.5: the stride sits on the 3x3 conv)."""
    cout = planes * 4
    identity = x
    with b.module("conv1"):
        out = folded_conv(b, x, cin, planes, 1)
    out = relu(b, out, "relu")
    with b.module("conv2"):
        out = folded_conv(b, out, planes, planes, 3, stride=stride, pad=1)
    out = relu(b, out, "relu_1")  # the shared nn.ReLU, second call
    with b.module("conv3"):
        # A small last-BN gamma (as in trained ResNets) keeps the residual
        # stream from growing block after block.
        out = folded_conv(b, out, planes, cout, 1, gamma_range=(0.1, 0.3))
    if with_downsample:
        with b.module("downsample"), b.module("0"):
            identity = folded_conv(b, x, cin, cout, 1, stride=stride, gamma_range=(0.3, 0.6))
    out = b.op("Add", [out, identity])
    return relu(b, out, "relu_2")


def build_resnet50(rng):
    b = GraphBuilder(rng)
    x = b.add_input("input", FLOAT, ["batch", 3, 224, 224])

    with b.module("conv1"):
        x = folded_conv(b, x, 3, 64, 7, stride=2, pad=3)
    x = relu(b, x, "relu")
    with b.module("maxpool"):
        x = b.op("MaxPool", [x], ceil_mode=0, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])

    cin = 64
    stages = [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]  # planes, blocks, stride
    for stage_index, (planes, num_blocks, stage_stride) in enumerate(stages, start=1):
        with b.module(f"layer{stage_index}"):
            for block in range(num_blocks):
                with b.module(str(block)):
                    stride = stage_stride if block == 0 else 1
                    x = bottleneck(b, x, cin, planes, stride, with_downsample=(block == 0))
                cin = planes * 4

    with b.module("avgpool"):
        x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)  # torch.flatten(x, 1) in ResNet.forward
    with b.module("fc"):
        linear_gemm(b, x, 2048, 1000, "output")
    b.add_output("output", FLOAT, ["batch", 1000])
    return b.build("main_graph", "torchvision ResNet-50 (eval export, BN folded), random weights")


# ---------------------------------------------------------------------------
# MobileNetV2 (torchvision), BatchNormalization kept
# ---------------------------------------------------------------------------


def conv_bn(b, x, cin, cout, kernel, stride=1, groups=1, relu6=True):
    """Conv2dNormActivation: "0" Conv (no bias), "1" BatchNorm, "2" ReLU6.

    Also used for the linear projection inside InvertedResidual by passing
    relu6=False (there the Conv and BN are siblings; see inverted_residual).
    """
    with b.module("0"):
        x = conv_no_bias(b, x, cin, cout, kernel, stride, groups)
    with b.module("1"):
        x = batchnorm(b, x, cout)
    if relu6:
        with b.module("2"):
            x = clip6(b, x)
    return x


def conv_no_bias(b, x, cin, cout, kernel, stride, groups):
    weight = b.param("weight", he_conv_weight(b, cout, cin // groups, kernel))
    pad = (kernel - 1) // 2
    return b.op("Conv", [x, weight], **conv_attrs(kernel, stride, pad, group=groups))


def batchnorm(b, x, channels, gamma_range=(0.8, 1.2)):
    gamma, beta, mean, var = random_batchnorm_stats(b, channels, gamma_range)
    inputs = [
        x,
        b.param("weight", gamma),
        b.param("bias", beta),
        b.param("running_mean", mean),
        b.param("running_var", var),
    ]
    # momentum is written as 1 - torch momentum (0.1).
    return b.op("BatchNormalization", inputs, epsilon=1e-5, momentum=0.9)


def clip6(b, x):
    """nn.ReLU6 -> Clip(x, 0, 6) with min/max as inputs (opset >= 11)."""
    lo = b.const(0.0, np.float32)
    hi = b.const(6.0, np.float32)
    return b.op("Clip", [x, lo, hi])


def inverted_residual(b, x, cin, cout, stride, expand_ratio):
    """torchvision InvertedResidual; its layers live in the Sequential "conv"."""
    hidden = cin * expand_ratio
    use_residual = stride == 1 and cin == cout
    with b.module("conv"):
        out = x
        index = 0
        if expand_ratio != 1:
            with b.module(str(index)):  # pointwise expansion
                out = conv_bn(b, out, cin, hidden, 1)
            index += 1
        with b.module(str(index)):  # depthwise 3x3
            out = conv_bn(b, out, hidden, hidden, 3, stride=stride, groups=hidden)
        with b.module(str(index + 1)):  # pointwise linear projection
            out = conv_no_bias(b, out, hidden, cout, 1, 1, 1)
        with b.module(str(index + 2)):
            out = batchnorm(b, out, cout, gamma_range=(0.3, 0.6) if use_residual else (0.8, 1.2))
    if use_residual:
        out = b.op("Add", [x, out])
    return out


def build_mobilenetv2(rng):
    b = GraphBuilder(rng)
    x = b.add_input("input", FLOAT, ["batch", 3, 224, 224])

    # (expansion t, output channels c, repeats n, first stride s)
    config = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]
    with b.module("features"):
        with b.module("0"):
            x = conv_bn(b, x, 3, 32, 3, stride=2)
        cin, index = 32, 1
        for t, c, n, s in config:
            for i in range(n):
                with b.module(str(index)):
                    x = inverted_residual(b, x, cin, c, s if i == 0 else 1, t)
                cin, index = c, index + 1
        with b.module(str(index)):
            x = conv_bn(b, x, cin, 1280, 1)

    # MobileNetV2.forward: adaptive_avg_pool2d(x, (1, 1)) then flatten(x, 1).
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    with b.module("classifier"):
        with b.module("0"):
            # Inference-mode Dropout: data input only (opset >= 12 has no ratio
            # attribute; ratio/training_mode inputs are optional).
            x = b.op("Dropout", [x])
        with b.module("1"):
            linear_gemm(b, x, 1280, 1000, "output")
    b.add_output("output", FLOAT, ["batch", 1000])
    return b.build("main_graph", "torchvision MobileNetV2 (BatchNormalization kept), random weights")


# ---------------------------------------------------------------------------
# BERT-base encoder (HuggingFace BertModel), unfolded shape logic
# ---------------------------------------------------------------------------

BERT_INIT_STD = 0.02  # HuggingFace initializer_range


def bert_linear(b, x, in_features, out_features, name):
    """nn.Linear on a 3-D input: MatMul with a pre-transposed anonymous weight
    ("onnx::MatMul_<id>", shape [in, out]) followed by Add(bias, matmul)."""
    with b.module(name):
        weight = b.anon_param("MatMul", b.normal((in_features, out_features), BERT_INIT_STD))
        bias = b.param("bias", b.normal(out_features, BERT_INIT_STD))
        out = b.op("MatMul", [x, weight])
        return b.op("Add", [bias, out])


def layer_norm(b, x, hidden, eps=1e-12, name="LayerNorm"):
    """nn.LayerNorm over the last axis, decomposed into primitive ops."""
    with b.module(name):
        gamma = b.param("weight", b.normal(hidden, 0.02, mean=1.0))
        beta = b.param("bias", b.normal(hidden, 0.02))
        mean = b.op("ReduceMean", [x], axes=[-1], keepdims=1)  # axes is an attribute until opset 18
        centered = b.op("Sub", [x, mean])
        squared = b.op("Pow", [centered, b.const(2.0, np.float32)])
        var = b.op("ReduceMean", [squared], axes=[-1], keepdims=1)
        var_eps = b.op("Add", [var, b.const(eps, np.float32)])
        std = b.op("Sqrt", [var_eps])
        normed = b.op("Div", [centered, std])
        scaled = b.op("Mul", [normed, gamma])
        return b.op("Add", [scaled, beta])


def gelu_erf(b, x):
    """Exact GELU as exported: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    scaled = b.op("Div", [x, b.const(1.4142135381698608, np.float32)])
    erf = b.op("Erf", [scaled])
    one_plus = b.op("Add", [erf, b.const(1.0, np.float32)])
    prod = b.op("Mul", [x, one_plus])
    return b.op("Mul", [prod, b.const(0.5, np.float32)])


def dynamic_dim(b, x, axis):
    """x.size(axis) while tracing: Shape -> Gather(scalar index) -> 0-d int64."""
    shape = b.op("Shape", [x])
    return b.op("Gather", [shape, b.const(axis, np.int64)], axis=0)


def unsqueeze0(b, scalar):
    return b.op("Unsqueeze", [scalar, b.const([0], np.int64)])


def view_with_dynamic_prefix(b, x, num_leading_dims, trailing_sizes):
    """x.view(x.size()[:k] + tuple(trailing_sizes)) with the leading dims read at
    runtime: Shape/Gather/Unsqueeze per dim, Concat with constants, Reshape."""
    pieces = [unsqueeze0(b, dynamic_dim(b, x, axis)) for axis in range(num_leading_dims)]
    pieces += [b.const([size], np.int64) for size in trailing_sizes]
    shape = b.op("Concat", pieces, axis=0)
    return b.op("Reshape", [x, shape], allowzero=0)


def torch_expand(b, x, size_scalars):
    """x.expand(*sizes) as torch exports it: sizes stacked into a 1-D tensor,
    then -1 entries replaced by 1 (Equal/Where) before Expand."""
    stacked = b.op("Concat", [unsqueeze0(b, s) for s in size_scalars], axis=0)
    size = b.op("Reshape", [stacked, b.const([-1], np.int64)], allowzero=0)
    ones = b.op(
        "ConstantOfShape",
        [b.op("Shape", [size])],
        value=numpy_helper.from_array(np.array([1], np.int64)),
    )
    neg_ones = b.op("Mul", [ones, b.const(-1, np.int64)])
    is_minus_one = b.op("Equal", [size, neg_ones])
    size = b.op("Where", [is_minus_one, ones, size])
    return b.op("Expand", [x, size])


def bert_embeddings(b, input_ids, token_type_ids, cfg):
    hidden = cfg["hidden"]
    word_table = b.param("word_embeddings.weight", b.normal((cfg["vocab"], hidden), BERT_INIT_STD))
    pos_table = b.param(
        "position_embeddings.weight", b.normal((cfg["max_positions"], hidden), BERT_INIT_STD)
    )
    type_table = b.param(
        "token_type_embeddings.weight", b.normal((cfg["type_vocab"], hidden), BERT_INIT_STD)
    )
    # Registered buffer: torch.arange(max_positions).expand((1, -1)).
    position_ids_buffer = b.param(
        "position_ids", np.arange(cfg["max_positions"], dtype=np.int64)[None, :]
    )

    # batch_size = input_shape[0]; seq_length = input_shape[1] (the latter read
    # through a 1-element Slice and Squeeze).
    batch_size = dynamic_dim(b, input_ids, 0)
    seq_slice = b.op(
        "Slice",
        [
            b.op("Shape", [input_ids]),
            b.const([1], np.int64),
            b.const([2], np.int64),
            b.const([0], np.int64),
        ],
    )
    seq_length = b.op("Squeeze", [seq_slice, b.const([0], np.int64)])

    # position_ids = self.position_ids[:, 0:seq_length].expand(batch, seq)
    position_ids = b.op(
        "Slice",
        [
            position_ids_buffer,
            b.const([0], np.int64),  # starts
            unsqueeze0(b, seq_length),  # ends
            b.const([1], np.int64),  # axes
            b.const([1], np.int64),  # steps
        ],
    )
    position_ids = torch_expand(b, position_ids, [batch_size, seq_length])

    with b.module("word_embeddings"):
        embeddings = b.op("Gather", [word_table, input_ids], axis=0)
    with b.module("token_type_embeddings"):
        type_embeddings = b.op("Gather", [type_table, token_type_ids], axis=0)
    embeddings = b.op("Add", [embeddings, type_embeddings])
    with b.module("position_embeddings"):
        pos_embeddings = b.op("Gather", [pos_table, position_ids], axis=0)
    embeddings = b.op("Add", [embeddings, pos_embeddings])
    return layer_norm(b, embeddings, hidden)


def bert_self_attention(b, hidden_states, attention_mask, cfg):
    heads = cfg["heads"]
    head_size = cfg["hidden"] // heads
    hidden = cfg["hidden"]

    def split_heads(x):  # BertSelfAttention.transpose_for_scores without the permute
        return view_with_dynamic_prefix(b, x, 2, [heads, head_size])

    query = bert_linear(b, hidden_states, hidden, hidden, "query")
    key = split_heads(bert_linear(b, hidden_states, hidden, hidden, "key"))
    value = split_heads(bert_linear(b, hidden_states, hidden, hidden, "value"))
    query = split_heads(query)

    # permute(0, 2, 1, 3) for K followed by transpose(-1, -2): the exporter
    # fuses the two into one Transpose.
    key_t = b.op("Transpose", [key], perm=[0, 2, 3, 1])
    value = b.op("Transpose", [value], perm=[0, 2, 1, 3])
    query = b.op("Transpose", [query], perm=[0, 2, 1, 3])

    scores = b.op("MatMul", [query, key_t])
    scores = b.op("Div", [scores, b.const(float(np.sqrt(head_size)), np.float32)])
    scores = b.op("Add", [scores, attention_mask])
    probs = b.op("Softmax", [scores], axis=-1)  # attention dropout is a no-op in eval
    context = b.op("MatMul", [probs, value])
    context = b.op("Transpose", [context], perm=[0, 2, 1, 3])
    return view_with_dynamic_prefix(b, context, 2, [hidden])


def bert_layer(b, hidden_states, attention_mask, cfg):
    hidden, intermediate = cfg["hidden"], cfg["intermediate"]
    with b.module("attention"):
        with b.module("self"):
            context = bert_self_attention(b, hidden_states, attention_mask, cfg)
        with b.module("output"):
            out = bert_linear(b, context, hidden, hidden, "dense")
            out = b.op("Add", [out, hidden_states])
            attention_output = layer_norm(b, out, hidden)
    with b.module("intermediate"):
        inner = bert_linear(b, attention_output, hidden, intermediate, "dense")
        with b.module("intermediate_act_fn"):
            inner = gelu_erf(b, inner)
    with b.module("output"):
        out = bert_linear(b, inner, intermediate, hidden, "dense")
        out = b.op("Add", [out, attention_output])
        return layer_norm(b, out, hidden)


def build_bert(rng, num_layers=12, vocab=30522):
    cfg = dict(
        hidden=768,
        heads=12,
        intermediate=3072,
        vocab=vocab,
        max_positions=512,
        type_vocab=2,
    )
    b = GraphBuilder(rng)
    input_ids = b.add_input("input_ids", INT64, ["batch", "sequence"])
    attention_mask = b.add_input("attention_mask", INT64, ["batch", "sequence"])

    # BertModel.forward: token_type_ids = torch.zeros(input_shape, dtype=long).
    token_type_ids = b.op(
        "ConstantOfShape",
        [b.op("Shape", [input_ids])],
        value=numpy_helper.from_array(np.array([0], np.int64)),
    )

    # get_extended_attention_mask: mask[:, None, None, :], cast to float,
    # (1.0 - mask) * finfo(float32).min -> additive mask of shape [N, 1, 1, S].
    mask = b.op("Unsqueeze", [attention_mask, b.const([1], np.int64)])
    mask = b.op("Unsqueeze", [mask, b.const([2], np.int64)])
    mask = b.op("Cast", [mask], to=FLOAT)
    inverted = b.op("Sub", [b.const(1.0, np.float32), mask])
    extended_mask = b.op("Mul", [inverted, b.const(FLOAT32_MIN, np.float32)])

    with b.module("embeddings"):
        hidden_states = bert_embeddings(b, input_ids, token_type_ids, cfg)
    with b.module("encoder"):
        for i in range(num_layers):
            with b.module(f"layer.{i}"):
                hidden_states = bert_layer(b, hidden_states, extended_mask, cfg)

    # The exporter emits an Identity when a graph output aliases another value.
    b.op("Identity", [hidden_states], outputs=["last_hidden_state"])
    b.add_output("last_hidden_state", FLOAT, ["batch", "sequence", cfg["hidden"]])
    return b.build(
        "main_graph", f"HuggingFace BERT-base encoder ({num_layers} layers), random weights"
    )


# ---------------------------------------------------------------------------
# Conv + ReLU: the smallest model with a real kernel, the README's example
# ---------------------------------------------------------------------------


def build_conv_relu(rng):
    b = GraphBuilder(rng)
    x = b.add_input("input", FLOAT, [1, 3, 32, 32])
    with b.module("conv"):
        weight = b.param("weight", he_conv_weight(b, 16, 3, 3))
        bias = b.param("bias", b.normal(16, 0.1))
        y = b.op("Conv", [x, weight, bias], **conv_attrs(3, 1, 1))
    with b.module("relu"):
        b.op("Relu", [y], outputs=["output"])
    b.add_output("output", FLOAT, [1, 16, 32, 32])
    return b.build("main_graph", "3x3 convolution with bias, then ReLU; random weights")


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

MODELS = {
    "conv_relu": lambda rng, args: build_conv_relu(rng),
    "resnet50": lambda rng, args: build_resnet50(rng),
    "mobilenetv2": lambda rng, args: build_mobilenetv2(rng),
    "bert": lambda rng, args: build_bert(rng, num_layers=args.layers, vocab=args.vocab),
}


def random_feed(model, batch=1, seq=128, seed=0):
    """Random inputs for a model with symbolic "batch"/"sequence" dims:
    token ids below the model's vocabulary, an attention mask that pads the
    last quarter, N(0, 1) for the rest."""
    rng = np.random.default_rng(seed)
    vocab = next((t.dims[0] for t in model.graph.initializer
                  if t.name == "embeddings.word_embeddings.weight"), 30522)
    feed = {}
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        dims = []
        for dim in tensor_type.shape.dim:
            if dim.dim_param:
                dims.append(batch if dim.dim_param == "batch" else seq)
            else:
                dims.append(dim.dim_value)
        if tensor_type.elem_type == INT64:
            if value.name == "attention_mask":
                data = np.ones(dims, np.int64)
                data[..., dims[-1] * 3 // 4 :] = 0  # pad the tail
            else:
                data = rng.integers(0, vocab, dims, dtype=np.int64)
        else:
            data = rng.standard_normal(dims, dtype=np.float32)
        feed[value.name] = data
    return feed


def verify(path, model):
    """onnx.checker (full) plus one onnxruntime run with random inputs."""
    onnx.checker.check_model(path, full_check=True)
    import onnxruntime as ort  # only needed for --verify

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    start = time.perf_counter()
    (result,) = session.run(None, random_feed(model))
    elapsed = time.perf_counter() - start
    print(
        f"  verified: checker ok, onnxruntime output {list(result.shape)} "
        f"mean {result.mean():.4g} std {result.std():.4g} finite={np.isfinite(result).all()} "
        f"({elapsed:.2f} s)"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument(
        "--models",
        default=",".join(MODELS),
        help="comma-separated subset of: " + ", ".join(MODELS),
    )
    parser.add_argument("--seed", type=int, default=0, help="weight RNG seed")
    parser.add_argument("--layers", type=int, default=12, help="BERT encoder layers")
    parser.add_argument(
        "--vocab",
        type=int,
        default=30522,
        help="BERT's vocabulary (the word embedding table's rows)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="run onnx.checker and one onnxruntime inference on each model",
    )
    args = parser.parse_args(argv)

    names = [name.strip() for name in args.models.split(",") if name.strip()]
    unknown = [name for name in names if name not in MODELS]
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)}")
    os.makedirs(args.out, exist_ok=True)

    for name in names:
        start = time.perf_counter()
        # A fresh generator per model, so a model's weights do not depend on
        # which other models were requested.
        rng = np.random.default_rng(args.seed)
        model = MODELS[name](rng, args)
        path = os.path.join(args.out, f"{name}.onnx")
        onnx.save_model(model, path)
        elapsed = time.perf_counter() - start
        params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
        print(
            f"wrote {path}: {os.path.getsize(path) / 2**20:.1f} MiB, "
            f"{len(model.graph.node)} nodes, {params / 1e6:.2f}M params ({elapsed:.1f} s)"
        )
        if args.verify:
            verify(path, model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
