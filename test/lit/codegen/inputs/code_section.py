#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes one code section of an artifact to a file, for vendor tools:

    kiln inspect --json A.kiln | code_section.py A.kiln TARGET KIND OUT

KIND as `kiln inspect` names it (HSACO, PTX, Cubin, HostSharedObject).
"""
import json
import sys


def main():
    artifact, target, kind, out = sys.argv[1:5]
    model = json.load(sys.stdin)
    section = next(code for code in model["code"]
                   if code["target"] == target and code["kind"] == kind)
    with open(artifact, "rb") as f:
        f.seek(section["offset"])
        data = f.read(section["bytes"])
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
