#!/usr/bin/env python3
"""Summarizes one GPU plan of `kiln inspect --json` (read from stdin):

    gpu_plan.py TARGET
        prints "TARGET: N kernels (M matmul), spilling: K" and, when K > 0,
        each spilling kernel: its number, kind, spilled bytes and ONNX nodes.
"""
import json
import sys


def main():
    target = sys.argv[1]
    model = json.load(sys.stdin)
    plan = next(plan for plan in model["plans"] if target in plan["targets"])
    kernels = plan["kernels"]
    spilling = [(i, k) for i, k in enumerate(kernels) if k.get("spill_bytes", 0) > 0]
    matmul = sum(1 for kernel in kernels if kernel["kind"] == "matmul")
    print(f"{target}: {len(kernels)} kernels ({matmul} matmul), spilling: {len(spilling)}")
    for i, kernel in spilling:
        print(f"  {i} {kernel['kind']}: {kernel['spill_bytes']} bytes spilled, {kernel['nodes']}")


if __name__ == "__main__":
    main()
