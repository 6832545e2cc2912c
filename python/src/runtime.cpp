// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- runtime.cpp - the kiln runtime's C API as the module kiln._runtime -===//
//
// Models, sessions and runs over runtime/include/kiln/runtime.h, for the
// Python layer (kiln/runtime.py), which maps dtypes and shapes: a run takes
// and fills C-contiguous buffers (any NumPy version's arrays, through
// nanobind's ndarray), in place, with the GIL released while it executes.
// A failed status becomes kiln.Error, with the runtime's code and message.
//
//===----------------------------------------------------------------------===//

#include <kiln/runtime.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

/// A failed status, until it reaches Python as kiln.Error.
struct StatusError {
  int code;
  std::string message;
};

void check(kiln_status_t status) {
  if (!status)
    return;
  StatusError error{int(kiln_status_code(status)), kiln_status_message(status)};
  kiln_status_free(status);
  throw error;
}

[[noreturn]] void invalid(std::string message) {
  throw StatusError{KILN_STATUS_INVALID_ARGUMENT, std::move(message)};
}

/// An input or output: its name, shape (-1 at a symbolic dimension),
/// kiln_dtype_t and each dimension's expression of the symbols ("" for a
/// static one).
using Info = std::tuple<std::string, std::vector<int64_t>, int, std::vector<std::string>>;

std::vector<Info> describe(const kiln_model_t *model, bool inputs) {
  size_t count = inputs ? kiln_model_input_count(model) : kiln_model_output_count(model);
  std::vector<Info> infos;
  for (size_t i = 0; i < count; ++i) {
    kiln_tensor_info_t info;
    check(inputs ? kiln_model_input_info(model, i, &info)
                 : kiln_model_output_info(model, i, &info));
    std::vector<std::string> dims;
    for (size_t d = 0; d < info.rank; ++d) {
      const char *dim =
          inputs ? kiln_model_input_dim(model, i, d) : kiln_model_output_dim(model, i, d);
      dims.emplace_back(dim ? dim : "");
    }
    infos.emplace_back(info.name, std::vector<int64_t>(info.shape, info.shape + info.rank),
                       int(info.dtype), std::move(dims));
  }
  return infos;
}

/// C-contiguous arrays on the CPU, of any element type (the Python layer
/// passes bfloat16 and 8-bit floats as unsigned integers of their size):
/// inputs may be read-only, outputs must be writable.
using InputBuffer = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutputBuffer = nb::ndarray<nb::c_contig, nb::device::cpu>;
/// A tensor of a run: its name, its buffer and its kiln_dtype_t.
template <typename Buffer> using Tensor = std::tuple<std::string, Buffer, int>;

/// What kiln_session_run reads: `tensors`' fields, with their shapes.
struct Tensors {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<kiln_tensor_t> list;

  template <typename Buffer> explicit Tensors(const std::vector<Tensor<Buffer>> &tensors) {
    shapes.reserve(tensors.size());
    for (const auto &[name, buffer, dtype] : tensors) {
      if (dtype < 0 || dtype > int(KILN_DTYPE_F8E5M2))
        invalid("tensor '" + name + "': unknown dtype " + std::to_string(dtype));
      shapes.emplace_back(buffer.shape_ptr(), buffer.shape_ptr() + buffer.ndim());
      list.push_back({name.c_str(), kiln_dtype_t(dtype), buffer.ndim(), shapes.back().data(),
                      const_cast<void *>(static_cast<const void *>(buffer.data())),
                      buffer.nbytes()});
    }
  }
};

/// Bytes the caller owns: a NumPy array that frees them with itself.
struct Owned {
  uint8_t *bytes;
  size_t size;
  Owned(uint8_t *bytes, size_t size) : bytes(bytes), size(size) {}
  nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> array() const {
    nb::capsule owner(bytes, [](void *data) noexcept { delete[] static_cast<uint8_t *>(data); });
    return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(bytes, {size}, owner);
  }
};
/// An output a run returns: its name, shape and bytes.
using Fresh =
    std::tuple<std::string, std::vector<int64_t>, nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>>;

/// A session: one caller runs it at a time (runs from several threads take
/// turns); several sessions of one model run side by side.
class Session {
public:
  explicit Session(kiln_session_t *session) : session(session) {}
  ~Session() { kiln_session_destroy(session); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Runs, writing `outputs` in place, and returns a copy of each output
  /// named in `fresh` (symbolic ones, whose shape the run decides): its
  /// name, this run's shape and its bytes.
  std::vector<Fresh> run(const std::vector<Tensor<InputBuffer>> &inputs,
                         const std::vector<Tensor<OutputBuffer>> &outputs,
                         const std::vector<std::string> &fresh) {
    Tensors in(inputs), out(outputs);
    for (const std::string &name : fresh)
      out.list.push_back({name.c_str()});
    kiln_status_t status;
    std::vector<std::tuple<std::string, std::vector<int64_t>, Owned>> copies;
    {
      nb::gil_scoped_release released;
      std::lock_guard<std::mutex> lock(running);
      status = kiln_session_run(session, in.list.data(), in.list.size(), out.list.data(),
                                out.list.size());
      // The session's buffers are the next run's: the caller gets copies.
      for (size_t i = outputs.size(); !status && i < out.list.size(); ++i) {
        const kiln_tensor_t &output = out.list[i];
        auto *copy = new uint8_t[output.byte_size ? output.byte_size : 1];
        std::copy_n(static_cast<const uint8_t *>(output.data), output.byte_size, copy);
        copies.emplace_back(fresh[i - outputs.size()],
                            std::vector<int64_t>(output.shape, output.shape + output.rank),
                            Owned(copy, output.byte_size));
      }
    }
    check(status);
    std::vector<Fresh> results;
    for (auto &[name, shape, owned] : copies)
      results.emplace_back(std::move(name), std::move(shape), owned.array());
    return results;
  }

  std::string device() const { return kiln_session_device(session); }
  std::string target() const { return kiln_session_target(session); }
  uint32_t threads() const { return kiln_session_threads(session); }
  double kernelMilliseconds() const { return kiln_session_kernel_milliseconds(session); }
  std::vector<double> kernelProfile() const {
    std::vector<double> times(kiln_session_kernel_profile(session, nullptr, 0));
    kiln_session_kernel_profile(session, times.data(), times.size());
    return times;
  }

private:
  kiln_session_t *session;
  std::mutex running;
};

class Model {
public:
  explicit Model(kiln_model_t *model) : model(model) {}
  ~Model() { kiln_model_release(model); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  static Model *fromFile(const std::string &path, const std::vector<nb::bytes> &keys) {
    std::string packed;
    kiln_model_options_t opts = options(keys, packed);
    kiln_model_t *model = nullptr;
    kiln_status_t status;
    {
      nb::gil_scoped_release released;
      status = kiln_model_load_file(path.c_str(), &opts, &model);
    }
    check(status);
    return new Model(model);
  }

  static Model *fromBytes(nb::bytes data, const std::vector<nb::bytes> &keys) {
    std::string packed;
    kiln_model_options_t opts = options(keys, packed);
    kiln_model_t *model = nullptr;
    check(kiln_model_load_memory(data.c_str(), data.size(), &opts, &model));
    return new Model(model);
  }

  std::vector<Info> inputs() const { return describe(model, true); }
  std::vector<Info> outputs() const { return describe(model, false); }

  /// Each symbol: its name, least and largest value and tuning point.
  std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> symbols() const {
    std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> list;
    for (size_t i = 0; i < kiln_model_symbol_count(model); ++i) {
      kiln_symbol_info_t symbol;
      check(kiln_model_symbol_info(model, i, &symbol));
      list.emplace_back(symbol.name, symbol.min, symbol.max, symbol.opt);
    }
    return list;
  }

  std::vector<std::string> targets() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < kiln_model_target_count(model); ++i)
      names.push_back(kiln_model_target(model, i));
    return names;
  }

  Session *session(const std::string &device, uint32_t threads, bool graph, bool profile) {
    kiln_session_options_t opts = {KILN_API_VERSION, device.c_str(), threads,
                                   (graph ? 0u : KILN_SESSION_NO_GRAPH) |
                                       (profile ? KILN_SESSION_PROFILE : 0u)};
    kiln_session_t *session = nullptr;
    kiln_status_t status;
    {
      nb::gil_scoped_release released;
      status = kiln_session_create(model, &opts, &session);
    }
    check(status);
    return new Session(session);
  }

private:
  /// Options with `keys` (32 bytes each) packed into `packed`.
  static kiln_model_options_t options(const std::vector<nb::bytes> &keys, std::string &packed) {
    for (const nb::bytes &key : keys) {
      if (key.size() != 32)
        invalid("a trusted key is a 32-byte Ed25519 public key, not " + std::to_string(key.size()) +
                " bytes");
      packed.append(key.c_str(), key.size());
    }
    return {KILN_API_VERSION, 0, reinterpret_cast<const uint8_t *>(packed.data()), keys.size()};
  }

  kiln_model_t *model;
};

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "The kiln runtime's C API (kiln/runtime.h); use it through the kiln package.";
  m.attr("API_VERSION") = KILN_API_VERSION;

  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError &error) {
      nb::object exception =
          nb::module_::import_("kiln.errors").attr("from_status")(error.code, error.message);
      PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exception.ptr())), exception.ptr());
    }
  });

  nb::class_<Session>(m, "Session")
      .def("run", &Session::run, nb::arg("inputs"), nb::arg("outputs"), nb::arg("fresh"),
           "Runs on [(name, buffer, dtype)], writing the outputs' buffers; returns [(name, "
           "shape, bytes)] of the outputs named in `fresh`.")
      .def_prop_ro("device", &Session::device)
      .def_prop_ro("target", &Session::target)
      .def_prop_ro("threads", &Session::threads)
      .def("kernel_milliseconds", &Session::kernelMilliseconds)
      .def("kernel_profile", &Session::kernelProfile);

  nb::class_<Model>(m, "Model")
      .def_static("from_file", &Model::fromFile, nb::arg("path"), nb::arg("trusted_keys"))
      .def_static("from_bytes", &Model::fromBytes, nb::arg("data"), nb::arg("trusted_keys"))
      .def_prop_ro("inputs", &Model::inputs, "[(name, shape, kiln dtype, dimension names)]")
      .def_prop_ro("outputs", &Model::outputs, "[(name, shape, kiln dtype, dimension names)]")
      .def_prop_ro("symbols", &Model::symbols, "[(name, min, max, opt)]")
      .def_prop_ro("targets", &Model::targets)
      .def("session", &Model::session, nb::arg("device"), nb::arg("threads"), nb::arg("graph"),
           nb::arg("profile"));
}
