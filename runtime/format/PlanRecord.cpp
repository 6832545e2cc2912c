// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plan's record (PlanRecord.h).

#include "runtime/format/PlanRecord.h"
#include "runtime/format/DimProgram.h"

#include <algorithm>
#include <cstdio>

namespace kiln::format {

namespace {

void appendTensors(std::string &out, const char *what, const std::vector<RecordTensor> &list) {
  for (size_t i = 0; i < list.size(); ++i) {
    const RecordTensor &tensor = list[i];
    const char *dtype = artifact::EnumNameDType(tensor.dtype);
    out += std::string(what) + " " + std::to_string(i) + " " + quoted(tensor.name) + ": " +
           (*dtype ? dtype : "?" + std::to_string(unsigned(tensor.dtype))) + " ";
    std::string shape;
    for (size_t d = 0; d < tensor.shape.size(); ++d) {
      bool symbolic = d < tensor.dims.size() && !tensor.dims[d].empty();
      shape += (d ? "x" : "") +
               (symbolic ? "(" + tensor.dims[d] + ")" : std::to_string(tensor.shape[d]));
    }
    out += (shape.empty() ? "scalar" : shape) + ", " + std::to_string(tensor.bytes) + " bytes\n";
  }
}

template <typename T> std::string dims(const std::vector<T> &values) {
  std::string out;
  for (T value : values)
    out += (out.empty() ? "" : "x") + std::to_string(value);
  return out.empty() ? "none" : out;
}

/// A program's text as a record field: in parentheses, names quoted.
std::string programText(const std::vector<int64_t> &program,
                        const std::vector<std::string_view> &names) {
  return "(" + dimText({program.data(), program.size()}, names, /*quote=*/true) + ")";
}

/// `count` programs from `first` as sizes are: "AxBxC", "none" for none.
std::string programDims(const std::vector<std::vector<int64_t>> &programs, size_t first,
                        size_t count, const std::vector<std::string_view> &names) {
  std::string out;
  for (size_t i = first; i < first + count && i < programs.size(); ++i)
    out += (out.empty() ? "" : "x") + programText(programs[i], names);
  return out.empty() ? "none" : out;
}

void appendLaunch(std::string &out, size_t index, const RecordLaunch &launch,
                  const std::vector<std::string_view> &names) {
  auto triple = [](const uint32_t values[3]) {
    return std::to_string(values[0]) + "x" + std::to_string(values[1]) + "x" +
           std::to_string(values[2]);
  };
  std::string grid = launch.gridPrograms.empty() ? triple(launch.grid)
                                                 : programDims(launch.gridPrograms, 0, 3, names);
  out += "launch " + std::to_string(index) + " " + quoted(launch.kernel) + ": grid " + grid +
         ", block " + triple(launch.block) + ", shared " + std::to_string(launch.sharedBytes) +
         " bytes\n";
  for (size_t i = 0; i < launch.args.size(); ++i) {
    const RecordArg &arg = launch.args[i];
    const std::vector<std::vector<int64_t>> &programs = arg.programs;
    out += "arg " + std::to_string(i) + ": ";
    if (arg.base.empty()) {
      out += "scalar of " + std::to_string(arg.width) + " bytes, " +
             (programs.empty() ? std::to_string(arg.bits) : programText(programs[0], names)) + "\n";
      continue;
    }
    out += std::string(arg.base) + " " + std::to_string(arg.index) + " at byte ";
    if (programs.empty()) {
      out += std::to_string(arg.byteOffset) + ", offset " + std::to_string(arg.offset) +
             ", sizes " + dims(arg.sizes) + ", strides " + dims(arg.strides);
    } else {
      size_t rank = programs.size() >= 2 ? (programs.size() - 2) / 2 : 0;
      out += programDims(programs, 0, 1, names) + ", offset " + programDims(programs, 1, 1, names) +
             ", sizes " + programDims(programs, 2, rank, names) + ", strides " +
             programDims(programs, 2 + rank, rank, names);
    }
    if (!arg.mapDims.empty())
      out += ", tensor map dims " + dims(arg.mapDims) + ", strides " + dims(arg.mapStrides) +
             ", box " + dims(arg.mapBox) + ", swizzle " + std::to_string(arg.swizzle);
    out += "\n";
  }
}

/// The line of `text` starting at `start`, and moves `start` past it.
std::string_view nextLine(std::string_view text, size_t &start) {
  if (start >= text.size())
    return {};
  size_t end = std::min(text.find('\n', start), text.size());
  std::string_view line = text.substr(start, end - start);
  start = end + 1;
  return line;
}

} // namespace

std::string planRecord(const PlanFacts &facts) {
  std::string out = "kiln plan record 1\n";
  out += "target " + std::string(facts.target) + "\n";
  for (size_t i = 0; i < facts.symbols.size(); ++i) {
    const RecordSymbol &symbol = facts.symbols[i];
    out += "symbol " + std::to_string(i) + " " + quoted(symbol.name) + ": " +
           std::to_string(symbol.min) + " to " + std::to_string(symbol.max) + "\n";
  }
  appendTensors(out, "input", facts.inputs);
  appendTensors(out, "output", facts.outputs);
  out += "arena " + std::to_string(facts.arenaBytes) + " bytes\n";
  out += "weights " + std::to_string(facts.weightsBytes) + " bytes\n";
  out += "kernels " + std::to_string(facts.kernels) + "\n";
  std::vector<std::string_view> names;
  for (const RecordSymbol &symbol : facts.symbols)
    names.push_back(symbol.name);
  for (size_t i = 0; i < facts.launches.size(); ++i)
    appendLaunch(out, i, facts.launches[i], names);
  return out;
}

std::string recordMismatch(std::string_view manifest, std::string_view code) {
  if (manifest == code)
    return {};
  auto quote = [](std::string_view text) {
    return text.empty() ? std::string("nothing") : "`" + std::string(text) + "`";
  };
  for (size_t inManifest = 0, inCode = 0; inManifest < manifest.size() || inCode < code.size();) {
    std::string_view said = nextLine(manifest, inManifest), compiled = nextLine(code, inCode);
    if (said != compiled)
      return "the manifest says " + quote(said) + "; the code was compiled for " + quote(compiled);
  }
  // Only the line breaks differ.
  return "the manifest's record and the code's differ in their line breaks";
}

} // namespace kiln::format
