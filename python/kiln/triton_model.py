# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A Triton Inference Server Python-backend model that runs kiln artifacts.

`python -m kiln.serve --repository DIR ARTIFACTS...` writes it as
DIR/NAME/1/model.py, beside the artifacts and a config.pbtxt, for a
tritonserver of one's own (docs/serving.md); the kiln package must be
installed in the Python environment the backend runs. Each model instance
loads every .kiln file of its version folder (one model at one or more
batch sizes) and runs the requests of each batch Triton hands it together,
as kiln.serve does.
"""
import glob
import json
import os

import numpy as np
import triton_python_backend_utils as pb_utils

import kiln
from kiln.serve import Instance, Signature


class TritonPythonModel:
    def initialize(self, args):
        folder = os.path.join(args["model_repository"], args["model_version"])
        models = [kiln.Model(path) for path in sorted(glob.glob(os.path.join(folder, "*.kiln")))]
        self.signature = Signature(models)
        parameters = json.loads(args["model_config"]).get("parameters", {})
        device = parameters.get("device", {}).get("string_value", "host")
        threads = int(parameters.get("threads", {}).get("string_value", "0"))
        self.instance = Instance(models, self.signature, device, threads)

    def execute(self, requests):
        names = [name for name, _ in self.signature.inputs]
        given = [{name: pb_utils.get_input_tensor_by_name(request, name).as_numpy()
                  for name in names} for request in requests]
        if not self.signature.batched:
            results = [self.instance(**inputs) for inputs in given]
        else:
            # One run over every request's rows, then each its own.
            rows = [len(inputs[names[0]]) for inputs in given]
            outputs = self.instance(**{name: np.concatenate([inputs[name] for inputs in given])
                                       for name in names})
            bounds = np.cumsum([0] + rows)
            results = [{name: array[start:end] for name, array in outputs.items()}
                       for start, end in zip(bounds[:-1], bounds[1:])]
        return [pb_utils.InferenceResponse(output_tensors=[
            pb_utils.Tensor(name, np.ascontiguousarray(array)) for name, array in result.items()])
            for result in results]
