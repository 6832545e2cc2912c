"""The kiln runtime's C API (runtime/include/kiln/runtime.h) from Python,
through ctypes: load an artifact, open a session on a device, run it on
NumPy arrays. Needs only libkiln_runtime.so and NumPy.

    runtime = Runtime("build/lib/libkiln_runtime.so")
    model = runtime.load("model.kiln")
    session = model.session("cuda:0")
    outputs = session.run({"input": x})        # {"output": array}
"""
import ctypes

import numpy as np

API_VERSION = 4
NO_GRAPH = 1
PROFILE = 2
# kiln_dtype_t, in order.
DTYPES = [np.float32, np.float16, np.uint16, np.float64, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.uint8, np.uint8]


class KilnError(RuntimeError):
    pass


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_size_t),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("byte_size", ctypes.c_size_t)]


class _Tensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_size_t),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p),
                ("byte_size", ctypes.c_size_t)]


class _ModelOptions(ctypes.Structure):
    _fields_ = [("api_version", ctypes.c_uint32), ("flags", ctypes.c_uint32)]


class _SessionOptions(ctypes.Structure):
    _fields_ = [("api_version", ctypes.c_uint32), ("device", ctypes.c_char_p),
                ("threads", ctypes.c_uint32), ("flags", ctypes.c_uint32)]


class Runtime:
    def __init__(self, library):
        lib = ctypes.CDLL(library)
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        signatures = {
            "kiln_status_code": (ctypes.c_int, [vp]),
            "kiln_status_message": (ctypes.c_char_p, [vp]),
            "kiln_status_free": (None, [vp]),
            "kiln_model_load_file": (vp, [ctypes.c_char_p, vp, ctypes.POINTER(vp)]),
            "kiln_model_release": (None, [vp]),
            "kiln_model_input_count": (sz, [vp]),
            "kiln_model_output_count": (sz, [vp]),
            "kiln_model_input_info": (vp, [vp, sz, ctypes.POINTER(_TensorInfo)]),
            "kiln_model_output_info": (vp, [vp, sz, ctypes.POINTER(_TensorInfo)]),
            "kiln_session_create": (vp, [vp, ctypes.POINTER(_SessionOptions), ctypes.POINTER(vp)]),
            "kiln_session_destroy": (None, [vp]),
            "kiln_session_device": (ctypes.c_char_p, [vp]),
            "kiln_session_run": (vp, [vp, ctypes.POINTER(_Tensor), sz, ctypes.POINTER(_Tensor), sz]),
            "kiln_session_kernel_milliseconds": (ctypes.c_double, [vp]),
            "kiln_session_kernel_profile": (sz, [vp, ctypes.POINTER(ctypes.c_double), sz]),
            "kiln_session_target": (ctypes.c_char_p, [vp]),
        }
        for name, (result, args) in signatures.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = result, args
        self.lib = lib

    def check(self, status):
        if status:
            code = self.lib.kiln_status_code(status)
            message = self.lib.kiln_status_message(status).decode()
            self.lib.kiln_status_free(status)
            raise KilnError(f"{message} (status {code})")

    def load(self, path):
        return Model(self, path)


class Model:
    def __init__(self, runtime, path):
        self.runtime = runtime
        handle = ctypes.c_void_p()
        runtime.check(runtime.lib.kiln_model_load_file(str(path).encode(), None,
                                                       ctypes.byref(handle)))
        self.handle = handle
        self.inputs = self._infos(runtime.lib.kiln_model_input_count,
                                  runtime.lib.kiln_model_input_info)
        self.outputs = self._infos(runtime.lib.kiln_model_output_count,
                                   runtime.lib.kiln_model_output_info)

    def _infos(self, count, describe):
        infos = []
        for i in range(count(self.handle)):
            info = _TensorInfo()
            self.runtime.check(describe(self.handle, i, ctypes.byref(info)))
            infos.append((info.name.decode(), info.dtype,
                          tuple(info.shape[d] for d in range(info.rank))))
        return infos

    def session(self, device="host", graph=True, profile=False):
        """A session on `device`; `profile` times each kernel (on a GPU, with
        no CUDA graph)."""
        return Session(self, device, graph, profile)

    def __del__(self):
        if getattr(self, "handle", None):
            self.runtime.lib.kiln_model_release(self.handle)


class Session:
    def __init__(self, model, device, graph, profile):
        self.model, lib = model, model.runtime.lib
        flags = (0 if graph else NO_GRAPH) | (PROFILE if profile else 0)
        options = _SessionOptions(API_VERSION, device.encode(), 0, flags)
        handle = ctypes.c_void_p()
        model.runtime.check(lib.kiln_session_create(model.handle, ctypes.byref(options),
                                                    ctypes.byref(handle)))
        self.handle = handle
        self.device = lib.kiln_session_device(handle).decode()
        self.target = lib.kiln_session_target(handle).decode()
        # Output buffers, reused by every run.
        self.results = {name: np.empty(shape, DTYPES[dtype])
                        for name, dtype, shape in model.outputs}

    def run(self, inputs):
        """Runs on {name: array}; returns {name: array}, overwritten by the
        next run."""
        keep, tensors = [], []
        for name, dtype, shape in self.model.inputs:
            # (np.ascontiguousarray would make a 0-d array 1-d.)
            array = np.asarray(inputs[name])
            if not array.flags.c_contiguous:
                array = array.copy(order="C")
            dims = (ctypes.c_int64 * len(shape))(*array.shape)
            keep += [array, dims]
            tensors.append(_Tensor(name.encode(), dtype, array.ndim, dims,
                                   array.ctypes.data, array.nbytes))
        outputs = []
        for name, dtype, shape in self.model.outputs:
            array = self.results[name]
            dims = (ctypes.c_int64 * len(shape))(*shape)
            keep.append(dims)
            outputs.append(_Tensor(name.encode(), dtype, len(shape), dims, array.ctypes.data,
                                   array.nbytes))
        tensor_array = (_Tensor * len(tensors))(*tensors)
        output_array = (_Tensor * len(outputs))(*outputs)
        self.model.runtime.check(self.model.runtime.lib.kiln_session_run(
            self.handle, tensor_array, len(tensors), output_array, len(outputs)))
        return self.results

    def kernel_milliseconds(self):
        """The last run's kernel time on the GPU (0 on the host)."""
        return self.model.runtime.lib.kiln_session_kernel_milliseconds(self.handle)

    def kernel_profile(self):
        """Each kernel's milliseconds in the last run, in plan order, for a
        session made with `profile` on a GPU; [] otherwise."""
        lib = self.model.runtime.lib
        count = lib.kiln_session_kernel_profile(self.handle, None, 0)
        times = (ctypes.c_double * count)()
        lib.kiln_session_kernel_profile(self.handle, times, count)
        return list(times)

    def __del__(self):
        if getattr(self, "handle", None):
            self.model.runtime.lib.kiln_session_destroy(self.handle)
