// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Sign.cpp - kiln sign, kiln verify and trusted keys -----------------===//
//
//   kiln sign model.kiln --key signing.pem [-o signed.kiln]
//   kiln verify model.kiln [--trusted-key signing.pub.pem]
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "compiler/artifact/Signing.h"

#include "runtime/format/format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;

namespace kiln {

cl::SubCommand signCommand("sign", "Sign a compiled model with an Ed25519 key");
cl::SubCommand verifyCommand("verify", "Check a compiled model's digest and signature");

namespace {

cl::opt<std::string> signFile(cl::Positional, cl::desc("<model.kiln>"), cl::Required,
                              cl::sub(signCommand));
cl::opt<std::string> signKey("key", cl::desc("The Ed25519 private key (PEM) to sign with"),
                             cl::value_desc("file"), cl::Required, cl::sub(signCommand));
cl::opt<std::string> signOutput("o",
                                cl::desc("Where to write the signed model (default: in place)"),
                                cl::value_desc("path"), cl::sub(signCommand));

cl::opt<std::string> verifyFile(cl::Positional, cl::desc("<model.kiln>"), cl::Required,
                                cl::sub(verifyCommand));

cl::list<std::string> trustedKeys(
    "trusted-key",
    cl::desc("Load only models signed by this Ed25519 public key (PEM, or 64 hex digits; "
             "repeatable)"),
    cl::value_desc("file"), cl::sub(verifyCommand), cl::sub(runCommand), cl::sub(benchCommand),
    cl::sub(inspectCommand));

} // namespace

ErrorOr<std::unique_ptr<MemoryBuffer>> readRegularFile(const std::string &path) {
  sys::fs::file_status status;
  if (std::error_code error = sys::fs::status(path, status))
    return error;
  if (!sys::fs::is_regular_file(status))
    return std::make_error_code(std::errc::invalid_argument);
  return MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
}

int modelOptions(uint32_t flags, std::vector<uint8_t> &keys, kiln_model_options_t &options) {
  for (const std::string &file : trustedKeys) {
    Expected<PublicKey> key = readPublicKey(file);
    if (!key)
      return reportError("--trusted-key: " + toString(key.takeError()));
    keys.insert(keys.end(), key->begin(), key->end());
  }
  options = {KILN_API_VERSION, flags, keys.data(), keys.size() / KILN_KEY_BYTES};
  return 0;
}

int loadModel(const std::string &path, uint32_t flags, ModelPtr &out) {
  kiln_model_options_t options;
  std::vector<uint8_t> keys;
  if (int status = modelOptions(flags, keys, options))
    return status;
  kiln_model_t *raw = nullptr;
  if (kiln_status_t status = kiln_model_load_file(path.c_str(), &options, &raw))
    return reportError(status);
  out.reset(raw);
  return 0;
}

int signModel() {
  auto file = readRegularFile(signFile);
  if (!file)
    return reportError("cannot read '" + signFile + "': " + file.getError().message());
  std::string bytes = (*file)->getBuffer().str();
  if (Error error = signArtifact(bytes, signKey))
    return reportError(signFile + ": " + toString(std::move(error)));
  // Written beside the target, then renamed over it: signing in place
  // never leaves half a file.
  std::string path = signOutput.empty() ? signFile.getValue() : signOutput.getValue();
  std::string temporary = path + ".signing";
  {
    std::error_code error;
    raw_fd_ostream out(temporary, error);
    if (!error) {
      out << bytes;
      out.close();
      // Taken, or the stream's destructor would abort on it.
      error = out.error();
      out.clear_error();
    }
    if (error) {
      sys::fs::remove(temporary);
      return reportError("cannot write '" + temporary + "': " + error.message());
    }
  }
  if (std::error_code error = sys::fs::rename(temporary, path)) {
    sys::fs::remove(temporary);
    return reportError("cannot write '" + path + "': " + error.message());
  }
  return 0;
}

int verifyModel() {
  // Read once; the runtime verifies those bytes (without loading any code)
  // and the header then says what it verified.
  auto file = readRegularFile(verifyFile);
  if (!file)
    return reportError("cannot read '" + verifyFile + "': " + file.getError().message());
  kiln_model_options_t options;
  std::vector<uint8_t> keys;
  if (int status = modelOptions(KILN_MODEL_LOAD_NO_CODE, keys, options))
    return status;
  kiln_model_t *raw = nullptr;
  if (kiln_status_t status = kiln_model_load_memory((*file)->getBufferStart(),
                                                    (*file)->getBufferSize(), &options, &raw)) {
    std::string message = verifyFile + ": " + kiln_status_message(status);
    kiln_status_free(status);
    return reportError(message);
  }
  ModelPtr model(raw);
  kiln_file_header_t header;
  memcpy(&header, (*file)->getBufferStart(), sizeof(header));
  static const uint8_t zeros[KILN_KEY_BYTES] = {};
  raw_ostream &os = outs();
  os << verifyFile << ": sha256:" << toHex(ArrayRef<uint8_t>(header.digest), true)
     << " matches its bytes\n";
  if (memcmp(header.signer, zeros, KILN_KEY_BYTES) == 0)
    os << "  unsigned\n";
  else
    os << "  signed by " << keyHex(header.signer) << " (valid"
       << (trustedKeys.empty() ? "" : ", trusted") << ")\n";
  return 0;
}

} // namespace kiln
