// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* The .kiln file layout, shared by the compiler's writer and the runtime's
 * loader. All integers are little-endian.
 *
 *   [0, 256)      header (below)
 *   [256, ...)    manifest: a FlatBuffer (artifact.fbs), then padding
 *   ...           code sections, each 64-byte aligned, in the manifest's
 *                 order
 *   ...           each plan's weights, 4096-byte aligned, in the order the
 *                 plans first name them (plans whose weights are the same
 *                 bytes share them)
 *
 * The layout is canonical: each section starts at the first aligned offset
 * after the one before, and the file ends at the first 8-byte boundary after
 * the last. The loader refuses any other, so no offset in the manifest can
 * point anywhere but where the writer put its section.
 *
 * The digest is the SHA-256 of the whole file with the authentication
 * fields (digest, signer, signature) read as zeros: `kiln verify` prints it.
 * The optional signature is an Ed25519 signature, by the key `signer`, of
 * KILN_SIGNED_PREFIX followed by the digest; an unsigned artifact has a
 * signer and signature of zeros.
 */
#ifndef KILN_RUNTIME_FORMAT_FORMAT_H
#define KILN_RUNTIME_FORMAT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define KILN_MAGIC "KILNMDL\0"
#define KILN_FORMAT_VERSION 10u
#define KILN_HEADER_SIZE 256u
#define KILN_WEIGHTS_ALIGNMENT 4096u
#define KILN_SECTION_ALIGNMENT 64u

#define KILN_DIGEST_BYTES 32u
#define KILN_KEY_BYTES 32u
#define KILN_SIGNATURE_BYTES 64u
/* What a signature signs, before the digest: it names the format, so a
 * kiln signature cannot be taken for one over anything else. */
#define KILN_SIGNED_PREFIX "kiln artifact sha256:"

typedef struct kiln_file_header_t {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  uint64_t file_size;
  uint64_t manifest_offset;
  uint64_t manifest_size;
  uint8_t reserved0[8];
  /* The authentication fields, read as zeros by the digest. */
  uint8_t digest[KILN_DIGEST_BYTES];
  uint8_t signer[KILN_KEY_BYTES];
  uint8_t signature[KILN_SIGNATURE_BYTES];
  uint8_t reserved[80];
} kiln_file_header_t;

#ifdef __cplusplus
static_assert(sizeof(kiln_file_header_t) == KILN_HEADER_SIZE, "header layout");
#else
_Static_assert(sizeof(kiln_file_header_t) == KILN_HEADER_SIZE, "header layout");
#endif

/* The bytes [KILN_AUTH_OFFSET, KILN_AUTH_OFFSET + KILN_AUTH_BYTES) the
 * digest reads as zeros. */
#define KILN_AUTH_OFFSET 48u
#define KILN_AUTH_BYTES (KILN_DIGEST_BYTES + KILN_KEY_BYTES + KILN_SIGNATURE_BYTES)

/* The host code's entry point, `void kiln_entry(void **args)`, receives the
 * model's inputs, its outputs, the session's activation arena, the weights,
 * each symbol's value in this run (an int64_t in a pointer's slot, in the
 * manifest's order), then a pointer to this context, through which the
 * code runs parallel work on the runtime's threads. */
typedef struct kiln_host_context_t {
  /* Calls body(captures, i) once for every i in [0, count), on any of the
   * pool's threads, and returns when every call has returned. */
  void (*parallel_for)(void *pool, void (*body)(void *captures, int64_t index), void *captures,
                       int64_t count);
  void *pool;
  /* Called, when not null, after each kernel of the plan with the kernel's
   * index in the manifest's list: how the runtime times kernels. */
  void (*kernel_end)(struct kiln_host_context_t *context, int64_t kernel);
} kiln_host_context_t;

/* The host code also exports `const char kiln_plan_record[]`, and PTX and
 * cubins hold a global of that name: what the code was compiled for
 * (PlanRecord.h), which the runtime compares with the manifest. */
#define KILN_PLAN_RECORD_SYMBOL "kiln_plan_record"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the digest of the `size`-byte artifact at `data` (whose header
 * must be whole) to `digest`; returns 0 on success, -1 when the
 * cryptography library fails. */
int kiln_artifact_digest(const uint8_t *data, size_t size, uint8_t digest[KILN_DIGEST_BYTES]);

/* Whether `signature` is `signer`'s Ed25519 signature of `digest` (with
 * KILN_SIGNED_PREFIX before it): 1 if it is, 0 if not. */
int kiln_signature_valid(const uint8_t digest[KILN_DIGEST_BYTES],
                         const uint8_t signer[KILN_KEY_BYTES],
                         const uint8_t signature[KILN_SIGNATURE_BYTES]);

/* Writes `key` to `hex` as 64 lowercase hex digits and a NUL: how kiln
 * names a signer. */
void kiln_key_hex(const uint8_t key[KILN_KEY_BYTES], char hex[2 * KILN_KEY_BYTES + 1]);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_FORMAT_FORMAT_H */
