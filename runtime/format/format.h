/* The .kiln file layout, shared by the compiler's writer and the runtime's
 * loader. All integers are little-endian.
 *
 *   [0, 64)       header (below)
 *   [64, ...)     manifest: a FlatBuffer (artifact.fbs), then padding
 *   ...           code sections, each 64-byte aligned
 *   ...           each plan's weights, 4096-byte aligned (plans whose
 *                 weights are the same bytes share them)
 *
 * The checksum covers the whole file with its own eight bytes read as zero,
 * so any change to any byte is detected.
 */
#ifndef KILN_RUNTIME_FORMAT_FORMAT_H
#define KILN_RUNTIME_FORMAT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define KILN_MAGIC "KILNMDL\0"
#define KILN_FORMAT_VERSION 5u
#define KILN_HEADER_SIZE 64u
#define KILN_WEIGHTS_ALIGNMENT 4096u
#define KILN_SECTION_ALIGNMENT 64u

typedef struct kiln_file_header_t {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  uint64_t file_size;
  uint64_t checksum;
  uint64_t manifest_offset;
  uint64_t manifest_size;
  uint8_t reserved[16];
} kiln_file_header_t;

#ifdef __cplusplus
static_assert(sizeof(kiln_file_header_t) == KILN_HEADER_SIZE, "header layout");
#else
_Static_assert(sizeof(kiln_file_header_t) == KILN_HEADER_SIZE, "header layout");
#endif

/* The byte offset of the checksum field. */
#define KILN_CHECKSUM_OFFSET 24u

/* The host code's entry point, `void kiln_entry(void **args)`, receives the
 * model's inputs, its outputs, the session's activation arena, the weights,
 * then a pointer to this context, through which the code runs parallel
 * work on the runtime's threads. */
typedef struct kiln_host_context_t {
  /* Calls body(captures, i) once for every i in [0, count), on any of the
   * pool's threads, and returns when every call has returned. */
  void (*parallel_for)(void *pool, void (*body)(void *captures, int64_t index), void *captures,
                       int64_t count);
  void *pool;
  /* Called, when not null, after each kernel of the plan with the kernel's
   * index in the manifest's list: how the runtime times kernels. (Since
   * format version 5.) */
  void (*kernel_end)(struct kiln_host_context_t *context, int64_t kernel);
} kiln_host_context_t;

#ifdef __cplusplus
extern "C" {
#endif

/* 64-bit FNV-1a over 8-byte words (then the tail bytes), with the checksum
 * field read as zero. Each step is a bijection of the state, so any single
 * changed byte changes the result. */
uint64_t kiln_checksum(const uint8_t *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_FORMAT_FORMAT_H */
