// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Signing.cpp - Ed25519 signatures of .kiln artifacts ----------------===//

#include "compiler/artifact/Signing.h"

#include "runtime/format/format.h"

#include "llvm/ADT/StringExtras.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {

namespace {

/// Key files are small: anything larger is not one.
constexpr size_t kMaxKeyFileBytes = 64 * 1024;

struct PKeyDeleter {
  void operator()(EVP_PKEY *key) const { EVP_PKEY_free(key); }
};
using PKey = std::unique_ptr<EVP_PKEY, PKeyDeleter>;

/// Reads the regular file at `path`, of at most kMaxKeyFileBytes.
std::string readKeyFile(llvm::StringRef path, std::string &text) {
  std::string name = path.str();
  int fd = open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return "cannot open key '" + name + "': " + strerror(errno);
  struct stat info;
  std::string error;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
    error = "key '" + name + "' is not a regular file";
  else if (size_t(info.st_size) > kMaxKeyFileBytes)
    error = "key '" + name + "' is " + std::to_string(info.st_size) +
            " bytes, too large for a key file";
  text.resize(error.empty() ? size_t(info.st_size) : 0);
  for (size_t done = 0; error.empty() && done < text.size();) {
    ssize_t n = read(fd, text.data() + done, text.size() - done);
    if (n <= 0)
      error = "cannot read key '" + name + "'";
    done += n > 0 ? size_t(n) : 0;
  }
  close(fd);
  return error;
}

/// The Ed25519 key in PEM `text`: a private key if `isPrivate`, else a
/// public key or the public half of a private one.
PKey parseKey(const std::string &text, bool isPrivate) {
  auto read = [&](bool priv) -> EVP_PKEY * {
    BIO *bio = BIO_new_mem_buf(text.data(), int(text.size()));
    if (!bio)
      return nullptr;
    EVP_PKEY *key = priv ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr)
                         : PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return key;
  };
  PKey key(read(isPrivate));
  if (!key && !isPrivate)
    key.reset(read(true));
  if (key && EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519)
    key.reset();
  return key;
}

} // namespace

std::string keyHex(const uint8_t *key) {
  char hex[2 * KILN_KEY_BYTES + 1];
  kiln_key_hex(key, hex);
  return hex;
}

llvm::Error signArtifact(std::string &bytes, llvm::StringRef keyPath) {
  std::string text;
  if (std::string error = readKeyFile(keyPath, text); !error.empty())
    return llvm::createStringError(error);
  PKey key = parseKey(text, /*isPrivate=*/true);
  if (!key)
    return llvm::createStringError("'" + keyPath.str() +
                                   "' holds no Ed25519 private key in PEM form");

  kiln_file_header_t header;
  auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
  uint8_t digest[KILN_DIGEST_BYTES];
  if (bytes.size() < sizeof(header))
    return llvm::createStringError("not a kiln artifact");
  memcpy(&header, data, sizeof(header));
  if (memcmp(header.magic, KILN_MAGIC, 8) != 0 || header.format_version != KILN_FORMAT_VERSION)
    return llvm::createStringError("not a kiln artifact of format version " +
                                   std::to_string(KILN_FORMAT_VERSION));
  if (kiln_artifact_digest(data, bytes.size(), digest) != 0 ||
      memcmp(digest, header.digest, sizeof(digest)) != 0)
    return llvm::createStringError(
        "the artifact's SHA-256 digest does not match its bytes: it was changed after it "
        "was written");

  size_t keyBytes = KILN_KEY_BYTES, signatureBytes = KILN_SIGNATURE_BYTES;
  std::string message = KILN_SIGNED_PREFIX;
  message.append(reinterpret_cast<const char *>(digest), sizeof(digest));
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  bool ok =
      context && EVP_PKEY_get_raw_public_key(key.get(), header.signer, &keyBytes) == 1 &&
      EVP_DigestSignInit(context, nullptr, nullptr, nullptr, key.get()) == 1 &&
      EVP_DigestSign(context, header.signature, &signatureBytes,
                     reinterpret_cast<const uint8_t *>(message.data()), message.size()) == 1 &&
      keyBytes == KILN_KEY_BYTES && signatureBytes == KILN_SIGNATURE_BYTES;
  EVP_MD_CTX_free(context);
  if (!ok)
    return llvm::createStringError("OpenSSL could not sign with '" + keyPath.str() + "'");
  memcpy(bytes.data(), &header, sizeof(header));
  return llvm::Error::success();
}

llvm::Expected<PublicKey> readPublicKey(llvm::StringRef path) {
  PublicKey out;
  std::string text;
  if (std::string error = readKeyFile(path, text); !error.empty())
    return llvm::createStringError(error);
  llvm::StringRef trimmed = llvm::StringRef(text).trim();
  if (trimmed.size() == 2 * KILN_KEY_BYTES && llvm::all_of(trimmed, llvm::isHexDigit)) {
    std::string raw = llvm::fromHex(trimmed);
    memcpy(out.data(), raw.data(), out.size());
    return out;
  }
  PKey key = parseKey(text, /*isPrivate=*/false);
  size_t bytes = out.size();
  if (!key || EVP_PKEY_get_raw_public_key(key.get(), out.data(), &bytes) != 1 ||
      bytes != out.size())
    return llvm::createStringError(
        "'" + path.str() +
        "' holds no Ed25519 public key (PEM, or 64 hex digits as kiln verify prints)");
  return out;
}

} // namespace kiln
