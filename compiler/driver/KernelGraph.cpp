// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KernelGraph.cpp - a plan's kernels as a Graphviz graph -------------===//

#include "compiler/driver/KernelGraph.h"

#include "codegen/common/Passes.h"

#include <set>

using namespace llvm;

namespace kiln {

void printKernelGraph(mlir::ModuleOp module, raw_ostream &os) {
  auto kernels = module->getAttrOfType<mlir::ArrayAttr>(kKernelsAttr);
  auto quote = [](StringRef text) {
    std::string quoted;
    for (char c : text)
      quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return quoted;
  };
  const std::pair<StringRef, StringRef> colours[] = {{"fp32", "#e8e8e8"}, {"tf32", "#9ecae1"},
                                                     {"fp16", "#a1d99b"}, {"bf16", "#fdd0a2"},
                                                     {"fp8", "#fc9272"},  {"fp8-fnuz", "#ef6548"}};
  auto colourOf = [&](StringRef precision) {
    for (auto &[name, colour] : colours)
      if (name == precision)
        return colour;
    return StringRef("#ffffff");
  };
  os << "digraph kernels {\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n";
  os << "  legend [shape=plaintext, style=\"\", label=<<table border=\"0\">";
  for (auto &[name, colour] : colours)
    os << "<tr><td bgcolor=\"" << colour << "\">" << name << "</td></tr>";
  os << "</table>>];\n";
  std::set<std::string> modelInputs;
  for (auto [i, entry] : llvm::enumerate(kernels.getAsRange<mlir::DictionaryAttr>())) {
    StringRef precision = entry.getAs<mlir::StringAttr>("precision").getValue();
    SmallVector<StringRef> nodes;
    entry.getAs<mlir::StringAttr>("node").getValue().split(nodes, ", ");
    std::string label = "#" + std::to_string(i) + " " +
                        entry.getAs<mlir::StringAttr>("kind").str() + " (" + precision.str() + ")";
    for (size_t n = 0; n < std::min<size_t>(nodes.size(), 3); ++n)
      label += "\\n" + quote(nodes[n]);
    if (nodes.size() > 3)
      label += "\\n+" + std::to_string(nodes.size() - 3) + " more";
    os << "  k" << i << " [label=\"" << label << "\", fillcolor=\"" << colourOf(precision)
       << "\"];\n";
    for (int64_t from : entry.getAs<mlir::DenseI64ArrayAttr>("after").asArrayRef())
      os << "  k" << from << " -> k" << i << ";\n";
    for (auto input : entry.getAs<mlir::ArrayAttr>("inputs").getAsRange<mlir::StringAttr>()) {
      if (modelInputs.insert(input.str()).second)
        os << "  \"in:" << quote(input) << "\" [shape=ellipse, style=\"\", label=\"" << quote(input)
           << "\"];\n";
      os << "  \"in:" << quote(input) << "\" -> k" << i << ";\n";
    }
    StringRef buffer = entry.getAs<mlir::StringAttr>("buffer").getValue();
    if (buffer != "arena")
      os << "  \"out:" << quote(buffer) << "\" [shape=ellipse, style=\"\", label=\""
         << quote(buffer) << "\"];\n  k" << i << " -> \"out:" << quote(buffer) << "\";\n";
  }
  os << "}\n";
}

} // namespace kiln
