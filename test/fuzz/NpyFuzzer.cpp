// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// .npy files as kiln run and --input-value read them: from a file, header
// first; the array read must be what its header declares.

#include "tools/kiln/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // An anonymous file: a regular file no other run sees.
  static int fd = memfd_create("kiln-fuzz-npy", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size))
    abort();
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  kiln::NpyArray array;
  if (!kiln::readNpy(path, array).empty())
    return 0;
  size_t elements = 1;
  for (int64_t dim : array.shape) {
    if (dim < 0)
      abort();
    elements *= size_t(dim);
  }
  if (elements * kiln_dtype_size(array.dtype) != array.data.size() || array.data.size() > size)
    abort();
  return 0;
}
