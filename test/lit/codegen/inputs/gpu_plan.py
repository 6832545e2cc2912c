#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Summarizes one GPU plan of `kiln inspect --json` (read from stdin):

    gpu_plan.py TARGET
        prints "TARGET: N kernels (M matmul), spilling: K" (NVIDIA) or
        "..., using scratch: K" (AMD) and, when K > 0, each such kernel:
        its number, kind, spilled or scratch bytes and ONNX nodes.
"""
import json
import sys


def main():
    target = sys.argv[1]
    model = json.load(sys.stdin)
    plan = next(plan for plan in model["plans"] if target in plan["targets"])
    kernels = plan["kernels"]
    amd = target.startswith("gfx")
    field, what = ("scratch_bytes", "using scratch") if amd else ("spill_bytes", "spilling")
    heavy = [(i, k) for i, k in enumerate(kernels) if k[field] > 0]
    matmul = sum(1 for kernel in kernels if kernel["kind"] == "matmul")
    print(f"{target}: {len(kernels)} kernels ({matmul} matmul), {what}: {len(heavy)}")
    for i, kernel in heavy:
        print(f"  {i} {kernel['kind']}: {kernel[field]} bytes, {kernel['nodes']}")


if __name__ == "__main__":
    main()
