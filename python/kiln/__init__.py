# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln: run models compiled ahead of time, compile them, serve them.

    import kiln, numpy as np
    model = kiln.compile("model.onnx", input_shapes={"input": [1, 3, 224, 224]})
    outputs = model.session().run({"input": np.zeros((1, 3, 224, 224), np.float32)})

docs/python.md has the whole API; docs/serving.md serving with Triton.
"""
from kiln.compiler import calibrate, compile, compiler_path
from kiln.errors import CompileError, Error, Status
from kiln.runtime import Model, Session, Symbol, TensorInfo, read_public_key

__all__ = ["Model", "Session", "Symbol", "TensorInfo", "Error", "CompileError", "Status", "compile",
           "calibrate", "compiler_path", "read_public_key"]
__version__ = "0.1.0"
