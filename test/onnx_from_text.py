#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Turns a model written in ONNX's text syntax into a binary .onnx file.

Lit tests keep their models as readable text beside their RUN and CHECK
lines; lines starting with '#' are comments (RUN, CHECK) and are dropped
before parsing.

    onnx_from_text.py test.onnxtxt -o model.onnx
"""
import argparse
import sys

import onnx
import onnx.parser


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    with open(args.input) as f:
        text = "".join(line for line in f if not line.lstrip().startswith("#"))
    try:
        model = onnx.parser.parse_model(text)
    except Exception as error:  # onnx raises a bare ParseError
        sys.exit(f"{args.input}: {error}")
    onnx.save(model, args.output)


if __name__ == "__main__":
    main()
