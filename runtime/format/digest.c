// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* The artifact's digest, the check of its signature (see format.h), on
 * OpenSSL's libcrypto, and signers' names. */
#include "runtime/format/format.h"

#include <openssl/evp.h>
#include <string.h>

int kiln_artifact_digest(const uint8_t *data, size_t size, uint8_t digest[KILN_DIGEST_BYTES]) {
  static const uint8_t zeros[KILN_AUTH_BYTES];
  if (size < KILN_HEADER_SIZE)
    return -1;
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  unsigned length = 0;
  int ok = context && EVP_DigestInit_ex(context, EVP_sha256(), NULL) &&
           EVP_DigestUpdate(context, data, KILN_AUTH_OFFSET) &&
           EVP_DigestUpdate(context, zeros, KILN_AUTH_BYTES) &&
           EVP_DigestUpdate(context, data + KILN_AUTH_OFFSET + KILN_AUTH_BYTES,
                            size - KILN_AUTH_OFFSET - KILN_AUTH_BYTES) &&
           EVP_DigestFinal_ex(context, digest, &length) && length == KILN_DIGEST_BYTES;
  EVP_MD_CTX_free(context);
  return ok ? 0 : -1;
}

int kiln_signature_valid(const uint8_t digest[KILN_DIGEST_BYTES],
                         const uint8_t signer[KILN_KEY_BYTES],
                         const uint8_t signature[KILN_SIGNATURE_BYTES]) {
  uint8_t message[sizeof(KILN_SIGNED_PREFIX) - 1 + KILN_DIGEST_BYTES];
  memcpy(message, KILN_SIGNED_PREFIX, sizeof(KILN_SIGNED_PREFIX) - 1);
  memcpy(message + sizeof(KILN_SIGNED_PREFIX) - 1, digest, KILN_DIGEST_BYTES);
  EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, signer, KILN_KEY_BYTES);
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  int valid =
      key && context && EVP_DigestVerifyInit(context, NULL, NULL, NULL, key) == 1 &&
      EVP_DigestVerify(context, signature, KILN_SIGNATURE_BYTES, message, sizeof(message)) == 1;
  EVP_MD_CTX_free(context);
  EVP_PKEY_free(key);
  return valid;
}

void kiln_key_hex(const uint8_t key[KILN_KEY_BYTES], char hex[2 * KILN_KEY_BYTES + 1]) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < KILN_KEY_BYTES; ++i) {
    hex[2 * i] = digits[key[i] >> 4];
    hex[2 * i + 1] = digits[key[i] & 15];
  }
  hex[2 * KILN_KEY_BYTES] = '\0';
}
