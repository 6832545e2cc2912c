/* The artifact checksum (see format.h). */
#include "runtime/format/format.h"

#include <string.h>

uint64_t kiln_checksum(const uint8_t *data, size_t size) {
  const uint64_t prime = 0x100000001b3ull;
  uint64_t hash = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    memcpy(&word, data + i, 8);
    if (i == KILN_CHECKSUM_OFFSET)
      word = 0;
    hash = (hash ^ word) * prime;
  }
  for (; i < size; ++i) {
    uint8_t byte = data[i];
    if (i >= KILN_CHECKSUM_OFFSET && i < KILN_CHECKSUM_OFFSET + 8)
      byte = 0;
    hash = (hash ^ byte) * prime;
  }
  return hash;
}
