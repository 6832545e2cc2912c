// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Run.cpp - kiln run: an artifact on .npy inputs ---------------------===//

#include "Commands.h"
#include "Npy.h"

#include "kiln/runtime.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <map>
#include <memory>

using namespace llvm;

namespace kiln {

cl::SubCommand runCommand("run", "Run a compiled model on .npy inputs");

namespace {

cl::opt<std::string> artifactFile(cl::Positional, cl::desc("<model.kiln>"), cl::Required,
                                  cl::sub(runCommand));
cl::list<std::string> inputs("input", cl::desc("An input: NAME=FILE.npy (repeatable)"),
                             cl::value_desc("name=file"), cl::sub(runCommand));
cl::opt<std::string> outputDir("output-dir", cl::desc("Where to write OUTPUT_NAME.npy files"),
                               cl::value_desc("dir"), cl::init("."), cl::sub(runCommand));
cl::opt<std::string> device("device", cl::desc("Where to run: host, cuda:N or hip:N"),
                            cl::init("host"), cl::sub(runCommand));
cl::opt<bool>
    noCudaGraph("no-cuda-graph",
                cl::desc("On a GPU, launch kernel by kernel instead of as one CUDA graph"),
                cl::sub(runCommand));
cl::opt<unsigned> threads("threads", cl::desc("Threads to run on (0: one per CPU)"), cl::init(0),
                          cl::sub(runCommand));

} // namespace

int runModel() {
  ModelPtr model;
  if (int status = loadModel(artifactFile, 0, model))
    return status;
  std::map<std::string, std::pair<size_t, kiln_tensor_info_t>> modelInputs;
  for (size_t i = 0; i < kiln_model_input_count(model.get()); ++i) {
    kiln_tensor_info_t info;
    if (kiln_status_t status = kiln_model_input_info(model.get(), i, &info))
      return reportError(status);
    modelInputs[info.name] = {i, info};
  }

  // Inputs: each file's header is checked against the model before its
  // data is read.
  std::map<std::string, NpyArray> arrays;
  for (const std::string &spec : inputs) {
    size_t equals = spec.rfind('=');
    if (equals == std::string::npos || equals == 0)
      return reportError("--input wants NAME=FILE.npy, got '" + spec + "'");
    std::string name = spec.substr(0, equals), path = spec.substr(equals + 1);
    if (arrays.count(name))
      return reportError("input '" + name + "' is given twice");
    auto known = modelInputs.find(name);
    if (known == modelInputs.end())
      return reportError("the model has no input named '" + name + "'");
    auto [index, info] = known->second;
    auto check = [&](NpyArray &array) -> std::string {
      // NumPy has no bfloat16: bf16 tensors travel as uint16 arrays of
      // their bits, as onnx's numpy_helper writes them.
      if (info.dtype == KILN_DTYPE_BF16 && array.dtype == KILN_DTYPE_U16)
        array.dtype = KILN_DTYPE_BF16;
      if (array.dtype != info.dtype)
        return "input '" + name + "' (" + path + ") holds " + kiln_dtype_name(array.dtype) +
               "; the model expects " + kiln_dtype_name(info.dtype);
      // A symbolic dimension takes any size here: the runtime checks it
      // against the symbol's range and the other inputs.
      bool fits = array.shape.size() == info.rank;
      for (size_t d = 0; fits && d < info.rank; ++d)
        fits = info.shape[d] < 0 || array.shape[d] == info.shape[d];
      if (!fits)
        return "input '" + name + "' (" + path + ") has shape " +
               shapeOf(array.shape.data(), array.shape.size()) + "; the model expects " +
               dimsOf(model.get(), index, info);
      return "";
    };
    if (std::string error = readNpy(path, arrays[name], check); !error.empty())
      return reportError(error);
  }
  std::vector<kiln_tensor_t> tensors;
  for (auto &[name, array] : arrays)
    tensors.push_back({name.c_str(), array.dtype, array.shape.size(), array.shape.data(),
                       array.data.data(), array.data.size()});

  std::vector<kiln_tensor_t> outputs(kiln_model_output_count(model.get()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    kiln_tensor_info_t info;
    if (kiln_status_t status = kiln_model_output_info(model.get(), i, &info))
      return reportError(status);
    outputs[i] = {info.name, info.dtype, 0, nullptr, nullptr, 0};
  }

  kiln_session_options_t options = {KILN_API_VERSION, device.c_str(), threads,
                                    noCudaGraph ? KILN_SESSION_NO_GRAPH : 0u};
  kiln_session_t *rawSession = nullptr;
  if (kiln_status_t status = kiln_session_create(model.get(), &options, &rawSession))
    return reportError(status);
  SessionPtr session(rawSession);
  if (kiln_status_t status = kiln_session_run(session.get(), tensors.data(), tensors.size(),
                                              outputs.data(), outputs.size()))
    return reportError(status);

  if (std::error_code ec = sys::fs::create_directories(outputDir))
    return reportError("cannot create '" + outputDir + "': " + ec.message());
  for (const kiln_tensor_t &output : outputs) {
    // Names come from the model: none may lead out of the output folder.
    StringRef name = output.name;
    if (name.empty() || name.contains('/') || name == "." || name == "..")
      return reportError("output '" + name + "' cannot be a file name; it is not written");
    SmallString<128> path(outputDir);
    sys::path::append(path, std::string(output.name) + ".npy");
    std::vector<int64_t> shape(output.shape, output.shape + output.rank);
    kiln_dtype_t dtype = output.dtype == KILN_DTYPE_BF16 ? KILN_DTYPE_U16 : output.dtype;
    if (std::string error =
            writeNpy(std::string(path), dtype, shape, output.data, output.byte_size);
        !error.empty())
      return reportError(error);
    outs() << "wrote " << path << "\n";
  }
  return 0;
}

} // namespace kiln
