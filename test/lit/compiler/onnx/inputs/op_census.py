#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Counts the ops of a printed kiln module read from stdin.

Prints one "NAME COUNT" line per kiln op, sorted by name, then
"other ops: N" for every op outside the kiln dialect (func.func, return and
the module excepted). Exits 1 when there are any: after import, every ONNX
node must have become a kiln op.
"""
import collections
import re
import sys

OP = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?([a-z_]+\.[a-z_.]+|[a-z_]+)\b")
STRUCTURE = {"module", "func.func", "return", "}"}


def main():
    counts = collections.Counter()
    others = collections.Counter()
    for line in sys.stdin:
        match = OP.match(line)
        if not match or match.group(1) in STRUCTURE:
            continue
        name = match.group(1)
        (counts if name.startswith("kiln.") else others)[name] += 1
    for name in sorted(counts):
        print(name, counts[name])
    print("other ops:", sum(others.values()), " ".join(sorted(others)))
    return 1 if others else 0


if __name__ == "__main__":
    sys.exit(main())
