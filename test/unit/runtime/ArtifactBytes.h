// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An artifact's bytes, for the tests of what the loader refuses: read from
// a file, and sealed again (the digest recomputed, as anyone can) after a
// test changes them.

#ifndef KILN_TEST_UNIT_RUNTIME_ARTIFACTBYTES_H
#define KILN_TEST_UNIT_RUNTIME_ARTIFACTBYTES_H

#include "runtime/format/format.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

inline std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  REQUIRE(file);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

inline void reseal(std::string &bytes) {
  kiln_file_header_t header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  REQUIRE(kiln_artifact_digest(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(),
                               header.digest) == 0);
  std::memcpy(bytes.data(), &header, sizeof(header));
}

#endif // KILN_TEST_UNIT_RUNTIME_ARTIFACTBYTES_H
