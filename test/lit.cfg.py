# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# lit configuration for kiln's FileCheck tests. lit.site.cfg.py (made by
# CMake) sets the paths, then loads this file.
import os
import shutil

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_build_dir, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in",
                   "unit", "models", "inputs"]

# ptxas comes with the CUDA toolkit, wherever PATH leaves it.
config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", ""),
     "/usr/local/cuda/bin"])
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"

test_dir = os.path.dirname(__file__)
config.substitutions.append(("%python", config.python_executable))
# ONNX text (as accepted by onnx.parser) to a binary .onnx file.
config.substitutions.append(
    ("%onnx-from-text", "%s %s" % (config.python_executable,
                                   os.path.join(test_dir, "onnx_from_text.py"))))
# Hand-made malformed models for the bad-input tests.
config.substitutions.append(
    ("%bad-model", "%s %s" % (config.python_executable,
                              os.path.join(test_dir, "lit", "compiler", "onnx", "inputs", "bad_model.py"))))
config.substitutions.append(
    ("%generate-model", "%s %s" % (config.python_executable,
                                   os.path.join(test_dir, "models", "generate.py"))))
config.substitutions.append(("%models", config.kiln_models_dir))
config.substitutions.append(("%kiln_build", config.kiln_build_dir))
config.substitutions.append(("%kiln_source", os.path.dirname(test_dir)))
config.substitutions.append(("%cmake", config.cmake_command))

if shutil.which("ptxas", path=config.environment["PATH"]):
    config.available_features.add("ptxas")
# A tree built with KILN_SANITIZE (tools/sanitize.sh --compiler).
if config.kiln_sanitize:
    config.available_features.add("sanitized")
