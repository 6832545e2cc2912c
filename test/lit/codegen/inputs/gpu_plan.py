#!/usr/bin/env python3
"""Summarizes one GPU plan of `kiln inspect`'s listing (read from stdin):

    gpu_plan.py TARGET
        prints "TARGET: N kernels (M matmul), spilling: K" and, when K > 0,
        each spilling kernel's line.
"""
import sys


def main():
    target = sys.argv[1]
    rows, inside = [], False
    for line in sys.stdin:
        if line.startswith("plan for "):
            inside = target in [t.strip() for t in line[len("plan for "):].rstrip(":\n").split(",")]
            continue
        if not line.startswith("  ") or not inside:
            inside = inside and line.startswith("  ")
            continue
        fields = line.split()
        # #, kind, precision, layout, grid, block, regs, smem (2), spills (2), nodes
        if len(fields) >= 11 and fields[0].isdigit():
            rows.append((fields[1], float(fields[9]), line.rstrip()))
    spilling = [row for row in rows if row[1] > 0]
    matmul = sum(1 for row in rows if row[0] == "matmul")
    print(f"{target}: {len(rows)} kernels ({matmul} matmul), spilling: {len(spilling)}")
    for row in spilling:
        print(row[2])


if __name__ == "__main__":
    main()
