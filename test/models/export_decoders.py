#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Export small decoder LLMs with past key/values the way users do, by optimum.

GPT-2 and a Llama-style decoder (grouped-query attention, rotary positions,
RMSNorm, a SiLU-gated MLP), each built from a config with two layers, a
hidden size of 32 and a vocabulary of 256, 128 positions, random weights
with real spread (export_transformers.py's), and exported by optimum-onnx's
`main_export` with the task `text-generation-with-past`: one graph that
takes `input_ids`, `attention_mask` (past and new tokens), `position_ids`
(Llama) and `past_key_values.N.key/value` of `past_sequence_length`
positions, and gives `logits` and `present.N.key/value`. A prefill feeds a
past of length 0; each decode step feeds one token and the last presents.

`--models gpt2_small,llama_small` exports full-size configurations instead
(GPT-2 small, and a Llama-style model of 8 layers and 1024 hidden units),
which tools/bench/decode.py times.

The exports are committed in test/models/decoders/ because CI has no torch;
optimum-onnx pins transformers below 4.58, so it gets its own venv:

    python3 -m venv build/optimum-venv
    build/optimum-venv/bin/pip install optimum-onnx onnxruntime
    build/optimum-venv/bin/python3 test/models/export_decoders.py --out test/models/decoders
"""

import os
import sys
import tempfile

import onnx
import torch
from optimum.exporters.onnx import main_export
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_transformers  # noqa: E402
from export_transformers import HIDDEN, LAYERS, VOCAB, spread_weights  # noqa: E402


def gpt2():
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=2,
                                      n_positions=128))


def llama():
    return LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                                        intermediate_size=2 * HIDDEN, num_hidden_layers=LAYERS,
                                        num_attention_heads=4, num_key_value_heads=2,
                                        max_position_embeddings=128, tie_word_embeddings=False))


# Full-size configurations for tools/bench/decode.py (not committed): GPT-2
# small (124M parameters) and a Llama-style model of 8 layers and 1024
# hidden units (grouped-query attention, 4 key/value heads of 16; 200M).
def gpt2_small():
    return GPT2LMHeadModel(GPT2Config())


def llama_small():
    return LlamaForCausalLM(LlamaConfig(vocab_size=32000, hidden_size=1024,
                                        intermediate_size=2816, num_hidden_layers=8,
                                        num_attention_heads=16, num_key_value_heads=4,
                                        max_position_embeddings=2048))


MODELS = {"gpt2": gpt2, "llama": llama}
BENCHMARK_MODELS = {"gpt2_small": gpt2_small, "llama_small": llama_small}


def export(name, out, seed):
    model = {**MODELS, **BENCHMARK_MODELS}[name]().eval()
    spread_weights(model, seed)
    path = os.path.join(out, f"{name}-past.onnx")
    with tempfile.TemporaryDirectory() as work:
        model.save_pretrained(os.path.join(work, "hf"))
        main_export(os.path.join(work, "hf"), output=os.path.join(work, "onnx"),
                    task="text-generation-with-past", do_validation=False,
                    no_post_process=True)
        proto = onnx.load(os.path.join(work, "onnx", "model.onnx"))
    for node in proto.graph.node:
        node.ClearField("doc_string")
    onnx.save(proto, path)
    return [path]


if __name__ == "__main__":
    export_transformers.main(__doc__.splitlines()[0], {**MODELS, **BENCHMARK_MODELS}, export,
                             default=MODELS)
