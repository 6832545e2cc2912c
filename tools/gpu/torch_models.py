# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The generated models (test/models/generate.py) as PyTorch modules with
the ONNX model's weights, for the GPU check's comparison with PyTorch eager
and torch.compile.

    module(torch, name, onnx_path, device) -> (torch.nn.Module, feed)

`feed(inputs)` turns the check's NumPy inputs into the module's arguments.
The CNNs run their ONNX graph node by node with torch.nn.functional; BERT is
HuggingFace's BertModel, which the generated graph reproduces, so PyTorch
runs it as its users do (fused LayerNorm and GELU, scaled dot-product
attention).
"""
import onnx
from onnx import numpy_helper


def initializers(torch, graph, device):
    return {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).to(device)
            for t in graph.initializer}


def cnn(torch, onnx_path, device):
    """The graph of the generated ResNet-50 or MobileNetV2, node by node,
    channels last (the input and the filters), as PyTorch runs CNNs fastest
    on tensor cores."""
    functional = torch.nn.functional
    graph = onnx.load(onnx_path).graph
    weights = {name: value.to(memory_format=torch.channels_last) if value.dim() == 4 else value
               for name, value in initializers(torch, graph, device).items()}
    for node in graph.node:
        if node.op_type == "Constant":
            weights[node.output[0]] = torch.from_numpy(
                numpy_helper.to_array(node.attribute[0].t).copy()).to(device)
    nodes = [(n.op_type, list(n.input), n.output[0],
              {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
             for n in graph.node if n.op_type != "Constant"]
    # Clip's bounds as numbers now: read from tensors as it runs, they
    # would break torch.compile's graph at every Clip.
    for op, inputs, _, attrs in nodes:
        if op == "Clip":
            attrs["bounds"] = tuple(weights[name].item() for name in inputs[1:])
    input_name = next(v.name for v in graph.input if v.name not in weights)
    output_name = graph.output[0].name

    def padding(attrs):
        pads = list(attrs.get("pads", [0, 0, 0, 0]))
        if pads[:2] != pads[2:]:
            raise NotImplementedError(f"asymmetric pads {pads}")
        return tuple(pads[:2])

    def run(op, args, attrs):
        if op == "Conv":
            return functional.conv2d(args[0], args[1], args[2] if len(args) > 2 else None,
                                     stride=tuple(attrs.get("strides", [1, 1])),
                                     padding=padding(attrs),
                                     dilation=tuple(attrs.get("dilations", [1, 1])),
                                     groups=attrs.get("group", 1))
        if op == "BatchNormalization":
            return functional.batch_norm(args[0], args[3], args[4], args[1], args[2],
                                         training=False, eps=attrs.get("epsilon", 1e-5))
        if op == "Relu":
            return functional.relu(args[0])
        if op == "Clip":
            return torch.clamp(args[0], *attrs["bounds"])
        if op in ("Dropout", "Identity"):
            return args[0]
        if op == "Add":
            return args[0] + args[1]
        if op == "MaxPool":
            return functional.max_pool2d(args[0], tuple(attrs["kernel_shape"]),
                                         tuple(attrs.get("strides", [1, 1])), padding(attrs),
                                         ceil_mode=bool(attrs.get("ceil_mode", 0)))
        if op == "GlobalAveragePool":
            return args[0].mean((2, 3), keepdim=True)
        if op == "Flatten":
            return torch.flatten(args[0], attrs.get("axis", 1))
        if op == "Gemm":
            a = args[0].t() if attrs.get("transA", 0) else args[0]
            b = args[1].t() if attrs.get("transB", 0) else args[1]
            y = attrs.get("alpha", 1.0) * (a @ b)
            return y + attrs.get("beta", 1.0) * args[2] if len(args) > 2 else y
        raise NotImplementedError(f"operator {op}")

    class Graph(torch.nn.Module):
        def forward(self, x):
            env = dict(weights)
            env[input_name] = x
            for op, inputs, output, attrs in nodes:
                env[output] = run(op, [env[name] for name in inputs if name], attrs)
            return env[output_name]

    def feed(inputs):
        return (torch.from_numpy(inputs[input_name]).to(device)
                .to(memory_format=torch.channels_last),)

    return Graph().eval(), feed


def bert(torch, onnx_path, device):
    """HuggingFace's BertModel with the generated encoder's configuration
    and weights: each MatMul weight (stored [in, out]) is the Linear whose
    bias its Add adds."""
    from transformers import BertConfig, BertModel

    graph = onnx.load(onnx_path).graph
    weights = initializers(torch, graph, device)
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    state = {}
    for name, value in weights.items():
        if name.startswith("onnx::MatMul"):
            (matmul,) = consumers[name]
            (add,) = consumers[matmul.output[0]]
            bias = next(i for i in add.input if i in weights)
            state[bias.removesuffix(".bias") + ".weight"] = value.t().contiguous()
        else:
            state[name] = value
    words, hidden = state["embeddings.word_embeddings.weight"].shape
    layers = 1 + max(int(name.split(".")[2]) for name in state if name.startswith("encoder."))
    config = BertConfig(vocab_size=words, hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=hidden // 64,
                        intermediate_size=state["encoder.layer.0.intermediate.dense.weight"]
                        .shape[0],
                        max_position_embeddings=state["embeddings.position_embeddings.weight"]
                        .shape[0], layer_norm_eps=1e-12, hidden_act="gelu")
    model = BertModel(config, add_pooling_layer=False).to(device)
    # The position ids (0..511) are a buffer that some versions keep in
    # the state, others make.
    own = model.state_dict()
    state = {k: v for k, v in state.items() if k in own or v.is_floating_point()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    parameters = {name for name, _ in model.named_parameters()}
    if parameters & set(missing) or unexpected:
        raise RuntimeError(f"BERT's weights do not match BertModel's: missing "
                           f"{sorted(parameters & set(missing))}, unexpected {unexpected}")

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids,
                             attention_mask=attention_mask).last_hidden_state

    def feed(inputs):
        return tuple(torch.from_numpy(inputs[name]).to(device)
                     for name in ("input_ids", "attention_mask"))

    return Encoder().eval(), feed


def module(torch, name, onnx_path, device):
    return (bert if name == "bert" else cnn)(torch, onnx_path, device)
