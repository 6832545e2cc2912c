// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Npy.h - NumPy .npy files for kiln run ----------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_NPY_H
#define KILN_TOOLS_KILN_NPY_H

#include "kiln/runtime.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln {

struct NpyArray {
  kiln_dtype_t dtype;
  std::vector<int64_t> shape;
  std::string data; ///< little-endian, C order
};

/// Reads a .npy file (format 1.0 to 3.0, C order, little-endian); returns an
/// error message or "". Only a regular file is read, its header first:
/// `check`, when given, sees the dtype and shape (and may relabel the
/// dtype) before the data is read, and its error is returned instead.
std::string readNpy(const std::string &path, NpyArray &out,
                    const std::function<std::string(NpyArray &)> &check = nullptr);

/// Writes `data` as a .npy file; returns an error message or "".
std::string writeNpy(const std::string &path, kiln_dtype_t dtype, const std::vector<int64_t> &shape,
                     const void *data, size_t size);

} // namespace kiln

#endif // KILN_TOOLS_KILN_NPY_H
