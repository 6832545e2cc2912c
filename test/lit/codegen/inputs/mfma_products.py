#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks that an AMD plan's products run on MFMA, in its code object's
disassembly:

    mfma_products.py ARTIFACT TARGET < inspect.json
        prints "TARGET: M of N products on MFMA (INSTRUCTIONS)" and each
        product kernel without an MFMA instruction, by name.

llvm-objdump (first on PATH) disassembles the target's code object;
INSTRUCTIONS are the MFMA instructions it uses, each once.
"""
import json
import re
import subprocess
import sys


def main():
    artifact, target = sys.argv[1:3]
    model = json.load(sys.stdin)
    section = next(code for code in model["code"]
                   if code["target"] == target and code["kind"] == "HSACO")
    with open(artifact, "rb") as f:
        f.seek(section["offset"])
        data = f.read(section["bytes"])
    disassembly = subprocess.run(
        ["llvm-objdump", "-d", f"--mcpu={target}", "-"], input=data,
        capture_output=True, check=True).stdout.decode()
    functions, current = {}, None
    for line in disassembly.splitlines():
        label = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if label:
            current = functions.setdefault(label.group(1), [])
        elif current is not None:
            current.append(line)
    plan = next(plan for plan in model["plans"] if target in plan["targets"])
    products = [k["kernel"] for k in plan["kernels"] if k["kind"] == "matmul"]
    used, missing = set(), []
    for name in products:
        found = {m for line in functions.get(name, []) for m in re.findall(r"v_mfma\w*", line)}
        used |= found
        if not found:
            missing.append(name)
    print(f"{target}: {len(products) - len(missing)} of {len(products)} products on MFMA "
          f"({', '.join(sorted(used))})")
    for name in missing:
        print(f"  no MFMA: {name}")


if __name__ == "__main__":
    main()
