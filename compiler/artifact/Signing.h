// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Signing.h - Ed25519 signatures of .kiln artifacts --------*- C++ -*-===//
//
// An artifact is code: its signature says who made it. The signer's private
// key signs the artifact's SHA-256 digest (runtime/format/format.h); the
// runtime, given the public keys it trusts, refuses what none of them
// signed. Keys are PEM files as OpenSSL writes them:
//
//   openssl genpkey -algorithm ed25519 -out signing.pem
//   openssl pkey -in signing.pem -pubout -out signing.pub.pem
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ARTIFACT_SIGNING_H
#define KILN_COMPILER_ARTIFACT_SIGNING_H

#include "llvm/ADT/StringRef.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>

namespace kiln {

using PublicKey = std::array<uint8_t, 32>;

/// Signs the artifact in `bytes` in place with the Ed25519 private key in
/// the PEM file at `keyPath` (a signature already there is replaced).
/// Fails with what is wrong with the key or the artifact.
llvm::Error signArtifact(std::string &bytes, llvm::StringRef keyPath);

/// Reads an Ed25519 public key: a PEM file (a public key, or a private key
/// whose public half is taken), or a file holding the key's 64 hex digits
/// as `kiln verify` prints them. Fails with what is wrong with the file.
llvm::Expected<PublicKey> readPublicKey(llvm::StringRef path);

/// The key as 64 hex digits.
std::string keyHex(const uint8_t *key);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_SIGNING_H
