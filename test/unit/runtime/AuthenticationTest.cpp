// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the loader guarantees about artifacts it did not see written: a
// signature from a trusted key admits only the bytes it signed, and an
// edited manifest whose digest was recomputed (as anyone can) is refused
// with a status naming what disagrees, or runs with the original's results.
//
// Uses the artifact RuntimeTest.cpp does (conv_relu, $KILN_TEST_ARTIFACT).

#include "kiln/runtime.h"

#include "ArtifactBytes.h"

#include <openssl/evp.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string readArtifact() {
  const char *path = std::getenv("KILN_TEST_ARTIFACT");
  REQUIRE(path);
  return readBytes(path);
}

kiln_file_header_t headerOf(const std::string &bytes) {
  kiln_file_header_t header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  return header;
}

/// An Ed25519 key pair made for the test.
struct TestKey {
  EVP_PKEY *key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  uint8_t publicKey[KILN_KEY_BYTES];
  TestKey() {
    REQUIRE(key);
    size_t size = sizeof(publicKey);
    REQUIRE(EVP_PKEY_get_raw_public_key(key, publicKey, &size) == 1);
  }
  ~TestKey() { EVP_PKEY_free(key); }

  /// Signs `bytes` as `kiln sign` does: the digest they hold, prefixed.
  void sign(std::string &bytes) const {
    kiln_file_header_t header = headerOf(bytes);
    std::string message = KILN_SIGNED_PREFIX;
    message.append(reinterpret_cast<const char *>(header.digest), KILN_DIGEST_BYTES);
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    size_t size = KILN_SIGNATURE_BYTES;
    REQUIRE(EVP_DigestSignInit(context, nullptr, nullptr, nullptr, key) == 1);
    REQUIRE(EVP_DigestSign(context, header.signature, &size,
                           reinterpret_cast<const uint8_t *>(message.data()), message.size()) == 1);
    EVP_MD_CTX_free(context);
    std::memcpy(header.signer, publicKey, KILN_KEY_BYTES);
    std::memcpy(bytes.data(), &header, sizeof(header));
  }
};

/// Loads `bytes` trusting `keys` (none: no signature needed); the status's
/// code, with its message in `message`.
kiln_status_code_t load(const std::string &bytes, const std::vector<const TestKey *> &keys,
                        kiln_model_t **model, std::string *message = nullptr) {
  std::vector<uint8_t> trusted;
  for (const TestKey *key : keys)
    trusted.insert(trusted.end(), key->publicKey, key->publicKey + KILN_KEY_BYTES);
  kiln_model_options_t options = {KILN_API_VERSION, 0, trusted.data(), keys.size()};
  kiln_status_t status = kiln_model_load_memory(bytes.data(), bytes.size(), &options, model);
  kiln_status_code_t code = kiln_status_code(status);
  if (message)
    *message = kiln_status_message(status);
  kiln_status_free(status);
  return code;
}

/// The model's outputs for an input of a fixed pattern; empty if it does
/// not run.
std::vector<std::string> outputsOf(kiln_model_t *model) {
  kiln_session_t *session = nullptr;
  kiln_session_options_t sessionOptions = {KILN_API_VERSION, "host", 1, 0};
  if (kiln_status_t status = kiln_session_create(model, &sessionOptions, &session)) {
    kiln_status_free(status);
    return {};
  }
  std::vector<std::string> inputData;
  std::vector<kiln_tensor_t> inputs;
  for (size_t i = 0; i < kiln_model_input_count(model); ++i) {
    kiln_tensor_info_t info;
    REQUIRE(kiln_model_input_info(model, i, &info) == nullptr);
    std::string &data = inputData.emplace_back(info.byte_size, '\0');
    for (size_t j = 0; j < data.size(); ++j)
      data[j] = char(j % 4 == 3 ? 0x3f : j * 37);
  }
  for (size_t i = 0; i < kiln_model_input_count(model); ++i) {
    kiln_tensor_info_t info;
    REQUIRE(kiln_model_input_info(model, i, &info) == nullptr);
    inputs.push_back(
        {info.name, info.dtype, info.rank, info.shape, inputData[i].data(), info.byte_size});
  }
  std::vector<kiln_tensor_t> outputs(kiln_model_output_count(model));
  for (size_t i = 0; i < outputs.size(); ++i) {
    kiln_tensor_info_t info;
    REQUIRE(kiln_model_output_info(model, i, &info) == nullptr);
    outputs[i] = {info.name, info.dtype, 0, nullptr, nullptr, 0};
  }
  std::vector<std::string> results;
  kiln_status_t status =
      kiln_session_run(session, inputs.data(), inputs.size(), outputs.data(), outputs.size());
  if (!status)
    for (const kiln_tensor_t &output : outputs)
      results.emplace_back(static_cast<const char *>(output.data), output.byte_size);
  kiln_status_free(status);
  kiln_session_destroy(session);
  return results;
}

/// Every edit of one manifest field's bytes: each aligned 32-bit word and
/// 64-bit double word of the manifest set to values an attacker would try
/// (zero, one, its neighbours, half and double, the extremes, an unknown
/// enum), then sealed again.
std::vector<std::string> manifestEdits(const std::string &bytes) {
  kiln_file_header_t header = headerOf(bytes);
  size_t begin = header.manifest_offset, end = begin + header.manifest_size;
  std::vector<std::string> edits;
  auto edit = [&](size_t at, uint64_t value, size_t width) {
    uint64_t old = 0;
    std::memcpy(&old, bytes.data() + at, width);
    if (value == old)
      return;
    std::string changed = bytes;
    std::memcpy(changed.data() + at, &value, width);
    reseal(changed);
    edits.push_back(std::move(changed));
  };
  for (size_t at = begin; at + 4 <= end; at += 4) {
    uint32_t word;
    std::memcpy(&word, bytes.data() + at, 4);
    for (uint32_t value :
         {0u, 1u, 200u, word + 1, word - 1, word * 2, word / 2, 0x80000000u, 0xffffffffu})
      edit(at, value, 4);
  }
  for (size_t at = begin; at + 8 <= end; at += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + at, 8);
    for (uint64_t value :
         {word + 4096, word - 4096, uint64_t(1) << 40, uint64_t(1) << 62, ~uint64_t(0)})
      edit(at, value, 8);
  }
  return edits;
}

} // namespace

TEST_CASE("the digest covers every byte but the authentication fields", "[runtime][verify]") {
  std::string bytes = readArtifact();
  kiln_file_header_t header = headerOf(bytes);
  uint8_t digest[KILN_DIGEST_BYTES];
  REQUIRE(kiln_artifact_digest(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(),
                               digest) == 0);
  CHECK(std::memcmp(digest, header.digest, KILN_DIGEST_BYTES) == 0);
  // It is the SHA-256 of the file with those fields zeroed, as sha256sum
  // would compute it.
  std::string zeroed = bytes;
  std::memset(zeroed.data() + KILN_AUTH_OFFSET, 0, KILN_AUTH_BYTES);
  uint8_t plain[KILN_DIGEST_BYTES];
  unsigned size = 0;
  REQUIRE(EVP_Digest(zeroed.data(), zeroed.size(), plain, &size, EVP_sha256(), nullptr) == 1);
  CHECK(std::memcmp(plain, header.digest, KILN_DIGEST_BYTES) == 0);
}

TEST_CASE("trusted keys admit only artifacts they signed", "[runtime][verify]") {
  TestKey ours, theirs;
  std::string unsigned_ = readArtifact();
  std::string signedByUs = unsigned_, signedByThem = unsigned_;
  ours.sign(signedByUs);
  theirs.sign(signedByThem);
  kiln_model_t *model = nullptr;
  std::string message;

  // Without trusted keys anything that verifies loads; a signature present
  // must still be valid.
  for (const std::string *bytes : {&unsigned_, &signedByUs, &signedByThem}) {
    REQUIRE(load(*bytes, {}, &model) == KILN_STATUS_OK);
    kiln_model_release(model);
  }
  REQUIRE(load(signedByUs, {&ours}, &model) == KILN_STATUS_OK);
  CHECK(outputsOf(model).size() == 1);
  kiln_model_release(model);
  REQUIRE(load(signedByThem, {&theirs, &ours}, &model) == KILN_STATUS_OK);
  kiln_model_release(model);

  CHECK(load(unsigned_, {&ours}, &model, &message) == KILN_STATUS_PERMISSION_DENIED);
  CHECK(message == "the artifact is not signed, and only artifacts signed by a trusted key may "
                   "load");
  CHECK(load(signedByThem, {&ours}, &model, &message) == KILN_STATUS_PERMISSION_DENIED);
  CHECK(message.find("the artifact is signed by ") == 0);
  CHECK(message.find("which is not a trusted key") != std::string::npos);

  // A signature taken to another artifact, or one whose bytes changed and
  // whose digest was sealed again, fails with or without trusted keys.
  std::string moved = signedByUs;
  moved[moved.size() - 1] ^= 1;
  reseal(moved);
  for (bool trusting : {false, true}) {
    CHECK(load(moved,
               trusting ? std::vector<const TestKey *>{&ours} : std::vector<const TestKey *>{},
               &model, &message) == KILN_STATUS_PERMISSION_DENIED);
    CHECK(message.find("the artifact's signature does not verify") == 0);
  }
}

TEST_CASE("edited manifests are refused or run as the original does", "[runtime][verify]") {
  std::string original = readArtifact();
  kiln_model_t *model = nullptr;
  REQUIRE(load(original, {}, &model) == KILN_STATUS_OK);
  std::vector<std::string> expected = outputsOf(model);
  kiln_model_release(model);
  REQUIRE(!expected.empty());

  std::vector<std::string> edits = manifestEdits(original);
  REQUIRE(edits.size() > 1000);
  size_t refused = 0, ranAlike = 0;
  for (const std::string &edit : edits) {
    std::string message;
    kiln_status_code_t code = load(edit, {}, &model, &message);
    if (code != KILN_STATUS_OK) {
      INFO(message);
      CHECK((code == KILN_STATUS_DATA_LOSS || code == KILN_STATUS_UNIMPLEMENTED ||
             code == KILN_STATUS_UNAVAILABLE));
      CHECK(message.find("(null)") == std::string::npos);
      ++refused;
      continue;
    }
    std::vector<std::string> results = outputsOf(model);
    kiln_model_release(model);
    CHECK(results == expected);
    ranAlike += results == expected;
  }
  CHECK(refused + ranAlike == edits.size());
  // KILN_PRINT_EDITS=1 says how the edits fared (docs/runtime.md).
  if (std::getenv("KILN_PRINT_EDITS"))
    std::printf("%zu edits: %zu refused, %zu ran alike\n", edits.size(), refused, ranAlike);
  CHECK(refused > edits.size() / 2);
}

TEST_CASE("with a trusted key every edit is refused before anything is read", "[runtime][verify]") {
  TestKey ours;
  std::string original = readArtifact();
  ours.sign(original);
  kiln_file_header_t header = headerOf(original);
  std::vector<std::string> edits = manifestEdits(original);
  // And bytes of the code and weights, every 97th, flipped and sealed again.
  for (size_t at = header.manifest_offset + header.manifest_size; at < original.size(); at += 97) {
    std::string changed = original;
    changed[at] = char(changed[at] ^ 0x40);
    reseal(changed);
    edits.push_back(std::move(changed));
  }
  size_t refused = 0;
  for (const std::string &edit : edits) {
    kiln_model_t *model = nullptr;
    std::string message;
    refused += load(edit, {&ours}, &model, &message) == KILN_STATUS_PERMISSION_DENIED &&
               message.find("the artifact's signature does not verify") == 0;
    kiln_model_release(model);
  }
  CHECK(refused == edits.size());
}

TEST_CASE("code no device runs is refused, naming its section", "[runtime][verify]") {
  std::string original = readArtifact();
  kiln_file_header_t header = headerOf(original);
  std::string manifest = original.substr(header.manifest_offset, header.manifest_size);
  // The host code's target, as its Code table names it: the devices say
  // which targets are theirs (x86-64 levels for host code), so host code
  // that claims an NVIDIA or AMD chip, or no x86-64 level, is no one's.
  size_t at = manifest.find("x86-64-v3");
  REQUIRE(at != std::string::npos);
  for (const char *target : {"sm_90abcd", "gfx942abc", "y86-64-v3"}) {
    std::string edited = original;
    edited.replace(header.manifest_offset + at, 9, target);
    reseal(edited);
    kiln_model_t *model = nullptr;
    std::string message;
    INFO(target);
    CHECK(load(edited, {}, &model, &message) == KILN_STATUS_DATA_LOSS);
    CHECK(message.find("(" + std::string(target) + ") is of a kind its target cannot run") !=
          std::string::npos);
  }
}
