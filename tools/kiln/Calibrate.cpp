// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Calibrate.cpp - kiln calibrate: activation ranges for fp8 ----------===//
//
//   kiln calibrate model.onnx --inputs samples/ -o scales.json
//
// FP8 has so little range that each tensor a product reads needs a scale.
// A weight's comes from its values at compile time; an activation's from
// here: the model, compiled for the host in fp32 with every activation a
// Conv, Gemm or MatMul reads as an extra output, runs on each sample and
// the file records each such tensor's absolute maximum over all of them.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Compiler.h"
#include "Npy.h"
#include "compiler/driver/Driver.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <set>

using namespace llvm;

namespace kiln {

cl::SubCommand calibrateCommand("calibrate", "Record activation ranges for --precision fp8");

namespace {

cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.onnx>"), cl::Required,
                               cl::sub(calibrateCommand));
cl::opt<std::string> samplesDir(
    "inputs",
    cl::desc("Sample inputs: a folder of NAME.npy files, or of folders of them, one per sample"),
    cl::value_desc("dir"), cl::Required, cl::sub(calibrateCommand));
cl::opt<std::string> outputFile("o", cl::desc("The calibration file to write"),
                                cl::value_desc("scales.json"), cl::Required,
                                cl::sub(calibrateCommand));
cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Fix an input's shape, e.g. input=1x3x224x224 (repeatable)"),
                cl::value_desc("name=shape"), cl::sub(calibrateCommand));
cl::list<std::string> inputValues("input-value",
                                  cl::desc("Fix a graph input's value to the array in a .npy "
                                           "file, as kiln compile does (repeatable)"),
                                  cl::value_desc("name=file.npy"), cl::sub(calibrateCommand));

/// Makes every activation a product reads an output of @main, named after
/// its tensor; returns those names.
std::vector<std::string> exposeProductInputs(mlir::ModuleOp module) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  auto ret = cast<mlir::func::ReturnOp>(main.getBody().front().getTerminator());
  std::set<std::string> seen;
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    if (auto name = main.getResultAttrOfType<mlir::StringAttr>(i, "kiln.name"))
      seen.insert(name.str());
  std::vector<std::string> exposed;
  SmallVector<mlir::Value> results(ret.getOperands());
  SmallVector<mlir::DictionaryAttr> attrs;
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    attrs.push_back(main.getResultAttrDict(i));
  mlir::Builder b(module.getContext());
  main.walk([&](mlir::Operation *op) {
    auto names = op->getAttrOfType<mlir::ArrayAttr>("kiln.inputs");
    if (!names)
      return;
    for (unsigned i = 0; i < 2 && i < names.size() && i < op->getNumOperands(); ++i) {
      mlir::Value value = op->getOperand(i);
      auto name = dyn_cast<mlir::StringAttr>(names[i]);
      if (!name || value.getDefiningOp<ConstantOp>() || !seen.insert(name.str()).second)
        continue;
      results.push_back(value);
      attrs.push_back(b.getDictionaryAttr(b.getNamedAttr("kiln.name", name)));
      exposed.push_back(name.str());
    }
  });
  ret->setOperands(results);
  main.setFunctionType(
      b.getFunctionType(main.getArgumentTypes(), mlir::ValueRange(results).getTypes()));
  main.setAllResultAttrs(attrs);
  return exposed;
}

/// Compiles the model, with its products' activations as outputs, into an
/// artifact for this machine's CPU.
FailureOr<std::string> compileForCalibration(mlir::MLIRContext &context,
                                             std::vector<std::string> &exposed) {
  CompileOptions options;
  for (const std::string &spec : inputShapes)
    if (Error error = parseInputShape(spec, options.import))
      return (reportError(toString(std::move(error))), failure());
  for (const std::string &spec : inputValues)
    if (Error error = parseInputValue(spec, options.import))
      return (reportError(toString(std::move(error))), failure());
  options.hostCPU = "native";
  options.graph.precision = Precision::FP32;
  options.afterImport = [&](mlir::ModuleOp module) { exposed = exposeProductInputs(module); };
  return compileModel(context, modelFile, options);
}

/// The samples in `dir`: the folder itself when it holds .npy files, else
/// each folder in it. Each maps input names to files.
FailureOr<std::vector<std::pair<std::string, std::map<std::string, std::string>>>>
findSamples(StringRef dir) {
  auto npyFiles = [](StringRef folder, std::map<std::string, std::string> &files) {
    std::error_code ec;
    for (sys::fs::directory_iterator it(folder, ec), end; it != end && !ec; it.increment(ec))
      if (sys::path::extension(it->path()) == ".npy")
        files[sys::path::stem(it->path()).str()] = it->path();
    return ec;
  };
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> samples;
  std::map<std::string, std::string> files;
  if (std::error_code ec = npyFiles(dir, files))
    return (reportError("cannot read the sample folder '" + dir + "': " + ec.message()), failure());
  if (!files.empty()) {
    samples.emplace_back(dir.str(), files);
    return samples;
  }
  std::error_code ec;
  std::vector<std::string> folders;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (sys::fs::is_directory(it->path()))
      folders.push_back(it->path());
  std::sort(folders.begin(), folders.end());
  for (const std::string &folder : folders) {
    std::map<std::string, std::string> sample;
    if (std::error_code folderError = npyFiles(folder, sample))
      return (reportError("cannot read '" + folder + "': " + folderError.message()), failure());
    if (!sample.empty())
      samples.emplace_back(folder, sample);
  }
  if (samples.empty())
    return (reportError("'" + dir + "' holds no .npy files, nor folders of them"), failure());
  return samples;
}

} // namespace

int calibrateModel() {
  CompilerContext compiler;
  mlir::MLIRContext &context = compiler.get();

  auto samples = findSamples(samplesDir);
  if (failed(samples))
    return 1;
  std::vector<std::string> exposed;
  FailureOr<std::string> artifact = compileForCalibration(context, exposed);
  if (failed(artifact) || reportedError)
    return 1;
  kiln_model_t *rawModel = nullptr;
  if (kiln_status_t status =
          kiln_model_load_memory(artifact->data(), artifact->size(), nullptr, &rawModel))
    return reportError(status);
  ModelPtr model(rawModel);
  kiln_session_options_t options = {KILN_API_VERSION, "host", 0, 0};
  kiln_session_t *rawSession = nullptr;
  if (kiln_status_t status = kiln_session_create(model.get(), &options, &rawSession))
    return reportError(status);
  SessionPtr session(rawSession);

  std::vector<std::string> inputNames;
  for (size_t i = 0; i < kiln_model_input_count(model.get()); ++i) {
    kiln_tensor_info_t info;
    if (kiln_status_t status = kiln_model_input_info(model.get(), i, &info))
      return reportError(status);
    inputNames.push_back(info.name);
  }
  std::map<std::string, float> absmax;
  for (const std::string &name : exposed)
    absmax[name] = 0.0f;
  for (auto &[where, files] : *samples) {
    std::map<std::string, NpyArray> arrays;
    for (auto &[name, path] : files) {
      if (!llvm::is_contained(inputNames, name))
        return reportError("'" + path + "' names no input of the model (inputs: " +
                           llvm::join(inputNames, ", ") + ")");
      if (std::string error = readNpy(path, arrays[name]); !error.empty())
        return reportError(error);
    }
    for (const std::string &name : inputNames)
      if (!arrays.count(name))
        return reportError("sample '" + where + "' has no " + name + ".npy");
    std::vector<kiln_tensor_t> inputs;
    for (auto &[name, array] : arrays)
      inputs.push_back({name.c_str(), array.dtype, array.shape.size(), array.shape.data(),
                        array.data.data(), array.data.size()});
    std::vector<kiln_tensor_t> outputs;
    for (const std::string &name : exposed)
      outputs.push_back({name.c_str(), KILN_DTYPE_F32, 0, nullptr, nullptr, 0});
    if (kiln_status_t status = kiln_session_run(session.get(), inputs.data(), inputs.size(),
                                                outputs.data(), outputs.size())) {
      std::string message = kiln_status_message(status);
      kiln_status_free(status);
      return reportError("sample '" + where + "': " + message);
    }
    for (const kiln_tensor_t &output : outputs) {
      if (output.dtype != KILN_DTYPE_F32)
        continue;
      const float *values = static_cast<const float *>(output.data);
      float &largest = absmax[output.name];
      for (size_t i = 0, n = output.byte_size / sizeof(float); i < n; ++i)
        if (std::isfinite(values[i]))
          largest = std::fmax(largest, std::fabs(values[i]));
    }
  }

  json::Object tensors;
  for (auto &[name, value] : absmax)
    tensors[name] = double(value);
  json::Object file{{"model", sys::path::filename(modelFile).str()},
                    {"samples", int64_t(samples->size())},
                    {"tensors", std::move(tensors)}};
  std::error_code ec;
  raw_fd_ostream out(outputFile, ec);
  if (ec)
    return reportError("cannot write '" + outputFile + "': " + ec.message());
  out << formatv("{0:2}", json::Value(std::move(file))) << "\n";
  outs() << "calibrated " << exposed.size() << " tensors over " << samples->size()
         << (samples->size() == 1 ? " sample" : " samples") << " into " << outputFile << "\n";
  return 0;
}

} // namespace kiln
