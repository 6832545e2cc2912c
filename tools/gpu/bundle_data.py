# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs the GPU check's artifacts on its bundle's data with the kiln package.

The data hold bfloat16 and the 8-bit floats as the bits of their elements,
unsigned integers (as `kiln run` exchanges them, and the conformance suite
reads them); the package takes and returns ml_dtypes' types.
"""
import numpy as np


def as_bits(array):
    """bfloat16 and 8-bit float arrays as unsigned integers of their size."""
    if array.dtype.kind == "V":  # ml_dtypes' types
        return array.view(np.uint16 if array.dtype.itemsize == 2 else np.uint8)
    return array


def run(kiln, path, device, data, **session_options):
    """Runs the artifact at `path` on `device` with the inputs in `data`
    (an npz: "in:NAME" arrays); returns {output: array}, in bits as the data."""
    model = kiln.Model(path)
    types = {info.name: info.dtype for info in model.inputs}
    inputs = {}
    for key in data:
        if key.startswith("in:"):
            array, dtype = data[key], types.get(key[3:])
            if dtype is not None and dtype.kind == "V" and array.dtype.itemsize == dtype.itemsize:
                array = array.view(dtype)
            inputs[key[3:]] = array
    outputs = model.session(device, **session_options).run(inputs)
    return {name: as_bits(array) for name, array in outputs.items()}
