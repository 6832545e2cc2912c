// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The operator table: sorted, complete, and docs/operators.md agreeing with it.

#include "compiler/onnx/Operators.h"
#include "compiler/onnx/Importer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// A row of the operator table in docs/operators.md: its operators and
/// its opsets cell.
struct DocRow {
  std::vector<std::string> operators;
  std::string opsets;
};

std::vector<DocRow> documentedRows() {
  std::ifstream file(KILN_SOURCE_DIR "/docs/operators.md");
  REQUIRE(file);
  std::vector<DocRow> rows;
  bool inTable = false;
  for (std::string line; std::getline(file, line);) {
    if (llvm::StringRef(line).starts_with("| ONNX operator |")) {
      inTable = true;
      continue;
    }
    if (!inTable)
      continue;
    if (!llvm::StringRef(line).starts_with("|"))
      break;
    llvm::SmallVector<llvm::StringRef> cells;
    llvm::StringRef(line).split(cells, '|');
    REQUIRE(cells.size() > 3);
    if (cells[1].trim() == "---")
      continue;
    DocRow row;
    llvm::SmallVector<llvm::StringRef> names;
    cells[1].split(names, ',');
    for (llvm::StringRef name : names)
      row.operators.push_back(name.trim().str());
    row.opsets = cells[2].trim().str();
    rows.push_back(row);
  }
  return rows;
}

} // namespace

TEST_CASE("operators are sorted and found by name", "[operators]") {
  llvm::ArrayRef<kiln::OperatorInfo> all = kiln::supportedOperators().all();
  REQUIRE(all.size() > 100);
  for (size_t i = 1; i < all.size(); ++i)
    CHECK(all[i - 1].opType < all[i].opType);
  for (const kiln::OperatorInfo &info : all) {
    CHECK(kiln::supportedOperators().find(info.opType) == &info);
    CHECK(info.convert);
    CHECK(info.sinceOpset >= 1);
    CHECK(info.sinceOpset <= kiln::kMaxOpset);
  }
  CHECK(kiln::supportedOperators().find("StringNormalizer") == nullptr);
  CHECK(kiln::supportedOperators().find("") == nullptr);
}

TEST_CASE("docs/operators.md lists every operator once, with its opsets", "[operators]") {
  std::map<std::string, int64_t> registered;
  for (const kiln::OperatorInfo &info : kiln::supportedOperators().all())
    registered[info.opType] = info.sinceOpset;

  llvm::StringSet<> documented;
  for (const DocRow &row : documentedRows()) {
    int64_t first = kiln::kMaxOpset;
    for (const std::string &name : row.operators) {
      INFO("docs/operators.md names " << name);
      CHECK(documented.insert(name).second);
      auto it = registered.find(name);
      CHECK(it != registered.end());
      if (it != registered.end())
        first = std::min(first, std::max(it->second, kiln::kMinOpset));
    }
    // "11–21", with a note for the row's operators that came later
    // ("(the last two from 12)").
    std::string range = std::to_string(first) + "–" + std::to_string(kiln::kMaxOpset);
    INFO("the row of " << row.operators.front() << " says " << row.opsets);
    CHECK(llvm::StringRef(row.opsets).starts_with(range));
    for (const std::string &name : row.operators) {
      auto it = registered.find(name);
      if (it != registered.end() && it->second > first)
        CHECK(row.opsets.find("from " + std::to_string(it->second)) != std::string::npos);
    }
  }
  for (const auto &[name, since] : registered) {
    INFO(name << " is registered but not in docs/operators.md");
    CHECK(documented.contains(name));
  }
}
