#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks that every #include in kiln's sources runs down the layers.

docs/architecture.md explains the layers; LAYERS below is the same table.
Each source folder may include its own headers and those of the folders
listed for it; the longest matching folder decides. An include of another
kiln folder that is not listed fails the check, with the file, the line and
the rule it breaks. Includes of other projects (mlir/, llvm/, onnx/, ...)
and of headers beside the including file are not kiln's layering and are
not checked.

    python3 tools/check_layering.py [--root DIR]
"""

import argparse
import os
import re
import sys

# Folder -> what it may include besides itself, from the bottom up.
LAYERS = {
    "runtime/format": [],
    "runtime/include": [],
    "runtime/src": ["runtime/format", "kiln/runtime.h"],
    # The devices see the session's side through the interface and the
    # model, never each other; runtime/src/Device.cpp is the one place that
    # names them (and Loader.cpp loads the host code with the model).
    "runtime/src/host": ["runtime/format", "kiln/runtime.h", "runtime/src/Device.h",
                         "runtime/src/Model.h", "runtime/src/Status.h"],
    "runtime/src/cuda": ["runtime/format", "kiln/runtime.h", "runtime/src/Device.h",
                         "runtime/src/Model.h", "runtime/src/Status.h", "runtime/src/gpu"],
    "runtime/src/hip": ["runtime/format", "kiln/runtime.h", "runtime/src/Device.h",
                        "runtime/src/Model.h", "runtime/src/Status.h", "runtime/src/gpu"],
    "runtime/src/gpu": ["runtime/format", "kiln/runtime.h", "runtime/src/Device.h",
                        "runtime/src/Model.h", "runtime/src/Status.h"],
    "dialects": [],
    # The graph passes; code generation never includes them.
    "passes": ["dialects"],
    # The buffer-level code generation every target's pipeline is built from.
    "codegen/common": ["dialects"],
    "codegen/kernels": ["dialects", "codegen/common"],
    "codegen/gpu": ["dialects", "codegen/common", "codegen/Target.h", "runtime/format"],
    # The targets: each sees the interface, the shared toolchain and GPU
    # kernel formation, never another target; those whose code goes into
    # artifacts, the format's ABI (the host context, the plan record).
    "codegen/host": ["dialects", "codegen/common", "codegen/Target.h", "codegen/Toolchain.h",
                     "runtime/format"],
    "codegen/nvptx": ["dialects", "codegen/common", "codegen/Target.h", "codegen/Toolchain.h",
                      "codegen/gpu", "runtime/format"],
    "codegen/amdgpu": ["dialects", "codegen/common", "codegen/Target.h", "codegen/Toolchain.h",
                       "codegen/gpu", "runtime/format"],
    # codegen/Targets.cpp is the one place that lists the targets (and
    # registers code generation's passes).
    "codegen": ["dialects"],
    "compiler/onnx": ["dialects"],
    "compiler/artifact": ["dialects", "codegen/Target.h", "runtime/format"],
    "compiler/driver": ["dialects", "passes", "codegen/Target.h", "codegen/common/Passes.h",
                        "codegen/kernels/Passes.h", "compiler/onnx", "compiler/artifact"],
    # The CLI fills the driver's options and prints; it reads artifacts
    # through the runtime's public API and the format, and signs them.
    "tools/kiln": ["compiler/driver", "compiler/onnx", "compiler/artifact/Signing.h", "dialects",
                   "codegen/Target.h", "runtime/format", "kiln/runtime.h"],
    "tools/kiln-opt": ["compiler/driver"],
    "docs/examples": ["kiln/runtime.h"],
    # Tests may reach anything they test.
    "test": ["runtime", "dialects", "passes", "codegen", "compiler", "tools", "kiln/runtime.h"],
}

KILN_ROOTS = ("runtime/", "dialects/", "passes/", "codegen/", "compiler/", "tools/", "kiln/")
SOURCES = (".h", ".hpp", ".c", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    """The LAYERS entry that governs `path`: the longest matching folder."""
    best = None
    for folder in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def allowed(folder, include):
    if include == folder or include.startswith(folder + "/"):
        return True
    return any(include == rule or include.startswith(rule + "/") for rule in LAYERS[folder])


def check(root):
    violations, files = [], 0
    for top in ("runtime", "dialects", "passes", "codegen", "compiler", "tools", "test", "docs"):
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                folder = folder_of(path)
                files += 1
                with open(os.path.join(root, path), errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match or not match.group(1).startswith(KILN_ROOTS):
                            continue
                        include = match.group(1)
                        if folder is None:
                            violations.append(f"{path}:{number}: includes {include}, but "
                                              "tools/check_layering.py has no layer for it")
                        elif not allowed(folder, include):
                            violations.append(
                                f"{path}:{number}: {folder}/ may not include {include} "
                                f"(it may include: {', '.join(LAYERS[folder]) or 'only itself'})")
    return violations, files


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    args = parser.parse_args()
    violations, files = check(args.root)
    for violation in violations:
        print(violation)
    print(f"layering: {files} files, {len(violations)} includes against the layers")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
