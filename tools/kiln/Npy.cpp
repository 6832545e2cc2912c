//===- Npy.cpp - NumPy .npy files for kiln run ----------------------------===//

#include "Npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kiln {

namespace {

struct DescrName {
  const char *descr;
  kiln_dtype_t dtype;
};

// NumPy's type strings; '|' for one-byte types, '<' little-endian.
constexpr DescrName kDescrs[] = {
    {"<f4", KILN_DTYPE_F32}, {"<f2", KILN_DTYPE_F16}, {"<f8", KILN_DTYPE_F64},
    {"|i1", KILN_DTYPE_I8},  {"<i2", KILN_DTYPE_I16}, {"<i4", KILN_DTYPE_I32},
    {"<i8", KILN_DTYPE_I64}, {"|u1", KILN_DTYPE_U8},  {"<u2", KILN_DTYPE_U16},
    {"<u4", KILN_DTYPE_U32}, {"<u8", KILN_DTYPE_U64}, {"|b1", KILN_DTYPE_BOOL},
};

/// The value of `key` in a Python dict literal such as
/// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }.
std::string field(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return "";
  at = header.find(':', at);
  if (at == std::string::npos)
    return "";
  size_t begin = header.find_first_not_of(' ', at + 1);
  if (begin == std::string::npos)
    return "";
  char open = header[begin];
  size_t end = open == '\''  ? header.find('\'', begin + 1) + 1
               : open == '(' ? header.find(')', begin) + 1
                             : header.find_first_of(",}", begin);
  if (end == std::string::npos || end == 0 || end <= begin)
    return "";
  return header.substr(begin, end - begin);
}

} // namespace

std::string readNpy(const std::string &path, NpyArray &out) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return "cannot open '" + path + "'";
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return "'" + path + "' is not a .npy file";
  unsigned major = uint8_t(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return "'" + path + "' is truncated";
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = (headerLength << 8) | uint8_t(bytes[8 + i]);
    headerStart = 12;
  } else {
    return "'" + path + "' has .npy format version " + std::to_string(major) +
           ", which kiln does not read";
  }
  if (headerLength > bytes.size() - headerStart)
    return "'" + path + "' is truncated";
  std::string header = bytes.substr(headerStart, headerLength);

  std::string descr = field(header, "descr");
  bool known = false;
  for (const DescrName &entry : kDescrs)
    if (descr == std::string("'") + entry.descr + "'" ||
        (entry.descr[0] == '|' && descr == std::string("'<") + (entry.descr + 1) + "'")) {
      out.dtype = entry.dtype;
      known = true;
    }
  if (!known)
    return "'" + path + "' holds dtype " + descr + ", which kiln does not read";
  if (field(header, "fortran_order") != "False")
    return "'" + path + "' is in Fortran order; save it in C order";

  std::string shape = field(header, "shape");
  out.shape.clear();
  size_t count = 1;
  std::stringstream dims(shape.size() >= 2 ? shape.substr(1, shape.size() - 2) : "");
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    if (dim.find_first_not_of(' ') == std::string::npos)
      continue;
    char *end;
    long long value = strtoll(dim.c_str(), &end, 10);
    if (value < 0 || __builtin_mul_overflow(count, size_t(value), &count))
      return "'" + path + "' has an invalid shape " + shape;
    out.shape.push_back(value);
  }
  size_t size;
  if (__builtin_mul_overflow(count, kiln_dtype_size(out.dtype), &size))
    return "'" + path + "' has an invalid shape " + shape;
  size_t dataStart = headerStart + headerLength;
  if (bytes.size() - dataStart != size)
    return "'" + path + "' holds " + std::to_string(bytes.size() - dataStart) +
           " bytes of data but its shape needs " + std::to_string(size);
  out.data = bytes.substr(dataStart);
  return "";
}

std::string writeNpy(const std::string &path, kiln_dtype_t dtype, const std::vector<int64_t> &shape,
                     const void *data, size_t size) {
  const char *descr = nullptr;
  for (const DescrName &entry : kDescrs)
    if (entry.dtype == dtype)
      descr = entry.descr;
  if (!descr)
    return std::string("NumPy has no dtype for ") + kiln_dtype_name(dtype);
  std::string shapeText = "(";
  for (int64_t dim : shape)
    shapeText += std::to_string(dim) + ", ";
  if (shape.size() > 1)
    shapeText.resize(shapeText.size() - 1), shapeText.back() = ')';
  else
    shapeText = shape.empty() ? "()" : "(" + std::to_string(shape[0]) + ",)";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shapeText + ", }";
  // The data starts 64-byte aligned; the header ends with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream file(path, std::ios::binary);
  if (!file)
    return "cannot write '" + path + "'";
  file.write("\x93NUMPY\x01\x00", 8);
  char length[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  file.write(length, 2);
  file << header;
  file.write(static_cast<const char *>(data), size);
  return file ? "" : "cannot write '" + path + "'";
}

} // namespace kiln
