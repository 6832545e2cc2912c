#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Export small Hugging Face text models the way users do, for the model tests.

BERT (input_ids, attention_mask, token_type_ids), GPT-2, DistilBERT and a T5
encoder, each built from a config with two layers, a hidden size of 32 and a
vocabulary of 256 (reference.py inputs --vocab 256), 128 positions,
random weights with real spread, and exported by ``torch.onnx.export`` twice:
with the classic TorchScript exporter (``NAME.onnx``) and with the dynamo
exporter (``NAME-dynamo.onnx``). Batch and sequence stay symbolic, as a user
exports them; ``kiln compile --input-shape`` fixes them.

The exports are committed in test/models/transformers/ because CI has no
torch; this script is how they were made (transformers 4.x or 5.x, torch 2.x,
onnxscript for the dynamo exporter):

    python3 tools/bench/zoo.py --setup      # once: torch & co. in build/zoo-venv
    build/zoo-venv/bin/python3 test/models/export_transformers.py --out test/models/transformers
"""

import argparse
import os
import warnings

import onnx
import torch
from transformers import (BertConfig, BertModel, DistilBertConfig, DistilBertModel, GPT2Config,
                          GPT2Model, T5Config, T5EncoderModel)

LAYERS = 2
HIDDEN = 32
HEADS = 2
VOCAB = 256


def bert():
    config = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                                     num_attention_heads=HEADS, intermediate_size=2 * HIDDEN,
                                     max_position_embeddings=128)
    return BertModel(config), ["input_ids", "attention_mask", "token_type_ids"]


def gpt2():
    config = GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                                     n_positions=128, use_cache=False)
    return GPT2Model(config), ["input_ids", "attention_mask"]


def distilbert():
    config = DistilBertConfig(vocab_size=VOCAB, dim=HIDDEN, n_layers=LAYERS,
                                           n_heads=HEADS, hidden_dim=2 * HIDDEN,
                                           max_position_embeddings=128)
    return DistilBertModel(config), ["input_ids", "attention_mask"]


def t5_encoder():
    config = T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=HIDDEN // HEADS,
                                   d_ff=2 * HIDDEN, num_layers=LAYERS, num_heads=HEADS,
                                   use_cache=False)
    return T5EncoderModel(config), ["input_ids", "attention_mask"]


MODELS = {"bert": bert, "gpt2": gpt2, "distilbert": distilbert, "t5_encoder": t5_encoder}


def spread_weights(model, seed):
    """Re-draws every parameter so that outputs do not collapse: norms' scales
    around one, everything else normal with the layer's own fan-in scale."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            shape = parameter.shape
            if "norm" in name.lower() or "ln_" in name:
                if name.endswith("bias"):
                    parameter.copy_(0.1 * torch.randn(shape, generator=generator))
                else:
                    parameter.copy_(0.75 + 0.5 * torch.rand(shape, generator=generator))
            elif parameter.dim() >= 2:
                parameter.copy_(torch.randn(shape, generator=generator) / shape[-1] ** 0.5
                                if "embed" not in name and "wte" not in name and "wpe" not in name
                                else torch.randn(shape, generator=generator))
            else:
                parameter.copy_(0.1 * torch.randn(shape, generator=generator))


class LastHiddenState(torch.nn.Module):
    """The model with its inputs as positional arguments and one output."""

    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args))).last_hidden_state


def export(name, out, seed):
    model, names = MODELS[name]()
    model.eval()
    spread_weights(model, seed)
    wrapper = LastHiddenState(model, names).eval()
    batch, sequence = 1, 16
    example = []
    for input_name in names:
        if input_name == "attention_mask":
            mask = torch.ones(batch, sequence, dtype=torch.int64)
            mask[:, sequence * 3 // 4:] = 0
            example.append(mask)
        elif input_name == "token_type_ids":
            example.append(torch.zeros(batch, sequence, dtype=torch.int64))
        else:
            example.append(torch.randint(0, VOCAB, (batch, sequence)))
    example = tuple(example)

    classic = os.path.join(out, f"{name}.onnx")
    torch.onnx.export(wrapper, example, classic, dynamo=False, opset_version=17,
                      input_names=names, output_names=["last_hidden_state"],
                      dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]})

    dynamo = os.path.join(out, f"{name}-dynamo.onnx")
    dims = {0: torch.export.Dim("batch", max=64), 1: torch.export.Dim("sequence", max=128)}
    def dynamo_export():
        return torch.onnx.export(wrapper, example, dynamo=True, input_names=names,
                                 output_names=["last_hidden_state"],
                                 dynamic_shapes=(tuple(dims for _ in names),))
    try:
        program = dynamo_export()
    except Exception as error:  # noqa: BLE001 - the exporter raises many kinds
        # torch 2.15 cannot decompose T5's attention in eval mode ("Cannot
        # view a tensor with shape [s0, s1, 2, 16] ... as (s0, s1, 32)"), but
        # can in training mode: export that with every dropout rate 0, which
        # computes the same (Dropout nodes in training mode with ratio 0).
        print(f"{name}: the dynamo exporter fails in eval mode ({type(error).__name__}); "
              "exporting training mode with dropout 0")
        for module in wrapper.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        wrapper.train()
        program = dynamo_export()
        wrapper.eval()
    # The dynamo exporter records a stack trace on every node; dropped, they
    # would be most of the file.
    proto = program.model_proto
    for node in proto.graph.node:
        node.ClearField("metadata_props")
        node.ClearField("doc_string")
    onnx.save(proto, dynamo)
    return [classic, dynamo]


def main(description, models, export_one, default=None):
    """Exports the --models of `models` (by default `default`, else all)
    into --out, model i with seed --seed + i, by export_one(name, out,
    seed), which gives the paths."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default=",".join(default or models))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    warnings.filterwarnings("ignore")
    for index, name in enumerate(args.models.split(",")):
        for path in export_one(name, args.out, args.seed + index):
            print(f"{path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main(__doc__.splitlines()[0], MODELS, export)
