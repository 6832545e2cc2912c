// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Npy.cpp - NumPy .npy files for kiln run ----------------------------===//

#include "Npy.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

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

/// NumPy refuses headers longer than this unless told otherwise.
constexpr size_t kMaxHeaderBytes = 10000;

/// A .npy header: the Python dict literal
/// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }, read as
/// Python reads it (a repeated key keeps its last value).
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Reads the dict into `fields` (key to its value's text); false if it
  /// is not a dict of strings to strings, booleans and integer tuples.
  bool parse(std::map<std::string, std::string> &fields) {
    if (!eat('{'))
      return false;
    while (!eat('}')) {
      std::string key, value;
      if (!string(key) || !eat(':') || !this->value(value))
        return false;
      fields[key] = value;
      if (!eat(',')) {
        if (!eat('}'))
          return false;
        break;
      }
    }
    skipSpace();
    return at == text.size();
  }

private:
  void skipSpace() {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n'))
      ++at;
  }
  bool eat(char c) {
    skipSpace();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  bool string(std::string &out) {
    skipSpace();
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      return false;
    char quote = text[at++];
    size_t end = text.find(quote, at);
    if (end == std::string_view::npos)
      return false;
    out = std::string(text.substr(at, end - at));
    at = end + 1;
    return true;
  }
  /// A string (kept with its quotes), True or False, or a tuple of
  /// non-negative integers (kept as "(1,3)").
  bool value(std::string &out) {
    skipSpace();
    if (at < text.size() && (text[at] == '\'' || text[at] == '"')) {
      if (!string(out))
        return false;
      out = "'" + out + "'";
      return true;
    }
    for (const char *word : {"True", "False"})
      if (text.substr(at, strlen(word)) == word) {
        at += strlen(word);
        out = word;
        return true;
      }
    if (!eat('('))
      return false;
    out = "(";
    while (!eat(')')) {
      skipSpace();
      size_t start = at;
      while (at < text.size() && text[at] >= '0' && text[at] <= '9')
        ++at;
      if (at == start || at - start > 18)
        return false;
      out += std::string(text.substr(start, at - start)) + ",";
      if (!eat(',')) {
        if (!eat(')'))
          return false;
        break;
      }
    }
    out += ")";
    return true;
  }

  std::string_view text;
  size_t at = 0;
};

/// Reads exactly `size` bytes at `offset` of `fd` into `out`.
bool readAt(int fd, size_t offset, size_t size, char *out) {
  for (size_t done = 0; done < size;) {
    ssize_t n = pread(fd, out + done, size - done, off_t(offset + done));
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

struct FileCloser {
  int fd;
  ~FileCloser() {
    if (fd >= 0)
      close(fd);
  }
};

} // namespace

std::string readNpy(const std::string &path, NpyArray &out,
                    const std::function<std::string(NpyArray &)> &check) {
  // Opened without blocking (a FIFO would wait for a writer) and read only
  // if it is a regular file, whose size bounds every read.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return "cannot open '" + path + "': " + strerror(errno);
  FileCloser closer{fd};
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
    return "'" + path + "' is not a regular file";
  size_t fileSize = size_t(info.st_size);
  char prefix[12] = {};
  if (fileSize < 10 || !readAt(fd, 0, std::min<size_t>(fileSize, 12), prefix) ||
      memcmp(prefix, "\x93NUMPY", 6) != 0)
    return "'" + path + "' is not a .npy file";
  unsigned major = uint8_t(prefix[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(prefix[8]) | (size_t(uint8_t(prefix[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (fileSize < 12)
      return "'" + path + "' is truncated";
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = (headerLength << 8) | uint8_t(prefix[8 + i]);
    headerStart = 12;
  } else {
    return "'" + path + "' has .npy format version " + std::to_string(major) +
           ", which kiln does not read";
  }
  if (headerLength > kMaxHeaderBytes)
    return "'" + path + "' has a " + std::to_string(headerLength) +
           "-byte header; .npy headers are at most " + std::to_string(kMaxHeaderBytes);
  if (headerLength > fileSize - headerStart)
    return "'" + path + "' is truncated";
  std::string header(headerLength, '\0');
  if (!readAt(fd, headerStart, headerLength, header.data()))
    return "cannot read '" + path + "'";

  std::map<std::string, std::string> fields;
  // descr a string, fortran_order a boolean, shape a tuple.
  if (!HeaderParser(header).parse(fields) || fields["descr"].empty() ||
      fields["descr"][0] != '\'' || fields["fortran_order"].empty() ||
      fields["fortran_order"][0] == '\'' || fields["shape"].empty() || fields["shape"][0] != '(')
    return "'" + path + "' has a malformed .npy header";
  const std::string &descr = fields["descr"];
  bool known = false;
  for (const DescrName &entry : kDescrs)
    if (descr == std::string("'") + entry.descr + "'" ||
        (entry.descr[0] == '|' && descr == std::string("'<") + (entry.descr + 1) + "'")) {
      out.dtype = entry.dtype;
      known = true;
    }
  if (!known)
    return "'" + path + "' holds dtype " + descr + ", which kiln does not read";
  if (fields["fortran_order"] != "False")
    return "'" + path + "' is in Fortran order; save it in C order";

  const std::string &shape = fields["shape"];
  out.shape.clear();
  size_t count = 1;
  for (size_t at = 1; at < shape.size() - 1;) {
    size_t comma = shape.find(',', at);
    unsigned long long value = std::stoull(shape.substr(at, comma - at));
    if (__builtin_mul_overflow(count, size_t(value), &count) || value > uint64_t(INT64_MAX))
      return "'" + path + "' has a shape too large to hold, " + shape;
    out.shape.push_back(int64_t(value));
    at = comma + 1;
  }
  size_t size;
  if (__builtin_mul_overflow(count, kiln_dtype_size(out.dtype), &size))
    return "'" + path + "' has a shape too large to hold, " + shape;
  size_t dataStart = headerStart + headerLength;
  if (fileSize - dataStart != size)
    return "'" + path + "' holds " + std::to_string(fileSize - dataStart) +
           " bytes of data but its shape needs " + std::to_string(size);
  if (check)
    if (std::string error = check(out); !error.empty())
      return error;
  out.data.resize(size);
  if (!readAt(fd, dataStart, size, out.data.data()))
    return "cannot read '" + path + "'";
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
