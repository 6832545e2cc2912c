// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Commands.h - kiln's subcommands besides compile ----------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "kiln/runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Reports an error the way every kiln command does; returns the exit code.
inline int reportError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kiln") << message << "\n";
  return 1;
}

/// Reports and frees a runtime status.
inline int reportError(kiln_status_t status) {
  int code = reportError(kiln_status_message(status));
  kiln_status_free(status);
  return code;
}

struct ModelDeleter {
  void operator()(kiln_model_t *model) const { kiln_model_release(model); }
};
struct SessionDeleter {
  void operator()(kiln_session_t *session) const { kiln_session_destroy(session); }
};
using ModelPtr = std::unique_ptr<kiln_model_t, ModelDeleter>;
using SessionPtr = std::unique_ptr<kiln_session_t, SessionDeleter>;

/// kiln run model.kiln --input name=file.npy ... --output-dir out/
extern llvm::cl::SubCommand runCommand;
int runModel();

/// kiln inspect model.kiln
extern llvm::cl::SubCommand inspectCommand;
int inspectModel();

/// kiln calibrate model.onnx --inputs DIR -o scales.json
extern llvm::cl::SubCommand calibrateCommand;
int calibrateModel();

/// kiln bench model.kiln --warmup N --iterations N
extern llvm::cl::SubCommand benchCommand;
int benchModel();

/// kiln sign model.kiln --key signing.pem
extern llvm::cl::SubCommand signCommand;
int signModel();

/// kiln verify model.kiln [--trusted-key signing.pub.pem]
extern llvm::cl::SubCommand verifyCommand;
int verifyModel();

/// A shape as kiln's messages write it: 1x3x224x224, or "scalar".
std::string shapeOf(const int64_t *shape, size_t rank);

/// Input (or, with `output`, output) `index` of `model`, described by
/// `info`, as kiln's messages write its shape: shapeOf for a static one,
/// `batch x 3 x 224 x 224` for a symbolic one.
std::string dimsOf(const kiln_model_t *model, size_t index, const kiln_tensor_info_t &info,
                   bool output = false);

/// The file at `path`, read whole if it is a regular file.
llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> readRegularFile(const std::string &path);

/// Load options with KILN_MODEL_LOAD_* `flags` and the keys --trusted-key
/// names (`keys` holds their bytes); an error's exit status (reported), or
/// 0.
int modelOptions(uint32_t flags, std::vector<uint8_t> &keys, kiln_model_options_t &options);

/// Loads the model at `path` with `flags` and the trusted keys; an error's
/// exit status (reported), or 0.
int loadModel(const std::string &path, uint32_t flags, ModelPtr &out);

} // namespace kiln

#endif // KILN_TOOLS_KILN_COMMANDS_H
