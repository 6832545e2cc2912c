// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Symbolic dimensions as programs (DimProgram.h).

#include "runtime/format/DimProgram.h"

#include <cstdio>

namespace kiln::format {

namespace {

bool isBinary(int64_t op) { return op >= int64_t(DimOp::Add) && op <= int64_t(DimOp::Min); }

/// a op b; nothing on overflow or a division by zero.
std::optional<int64_t> apply(DimOp op, int64_t a, int64_t b) {
  int64_t out;
  switch (op) {
  case DimOp::Add:
    if (__builtin_add_overflow(a, b, &out))
      return std::nullopt;
    return out;
  case DimOp::Mul:
    if (__builtin_mul_overflow(a, b, &out))
      return std::nullopt;
    return out;
  case DimOp::FloorDiv:
  case DimOp::CeilDiv:
  case DimOp::Mod: {
    if (b == 0 || (a == INT64_MIN && b == -1))
      return std::nullopt;
    int64_t quotient = a / b, remainder = a % b;
    if (op == DimOp::Mod)
      return remainder < 0 ? remainder + (b < 0 ? -b : b) : remainder;
    bool inexact = remainder != 0;
    bool negative = (a < 0) != (b < 0);
    if (op == DimOp::FloorDiv)
      return inexact && negative ? quotient - 1 : quotient;
    return inexact && !negative ? quotient + 1 : quotient;
  }
  case DimOp::Max:
    return a > b ? a : b;
  case DimOp::Min:
    return a < b ? a : b;
  default:
    return std::nullopt;
  }
}

/// A program read back into a tree, for printing.
struct Node {
  DimOp op;
  int64_t value; ///< a constant's, or a symbol's index
  size_t lhs = 0, rhs = 0;
};

std::vector<Node> tree(DimProgram program) {
  std::vector<Node> nodes;
  std::vector<size_t> stack;
  for (size_t i = 0; i + 1 < program.size; i += 2) {
    auto op = DimOp(program.words[i]);
    Node node{op, program.words[i + 1]};
    if (isBinary(program.words[i])) {
      node.rhs = stack.back();
      stack.pop_back();
      node.lhs = stack.back();
      stack.pop_back();
    }
    stack.push_back(nodes.size());
    nodes.push_back(node);
  }
  return nodes;
}

/// 1 for sums, 2 for products, divisions and remainders, 3 for the rest
/// (max and min print as calls).
int precedence(const Node &node) {
  if (node.op == DimOp::Add)
    return 1;
  return node.op != DimOp::Max && node.op != DimOp::Min && isBinary(int64_t(node.op)) ? 2 : 3;
}

struct Printer {
  const std::vector<Node> &nodes;
  const std::vector<std::string_view> &names;
  bool quote;

  std::string print(size_t index, int context) const;
};

std::string Printer::print(size_t index, int context) const {
  const Node &node = nodes[index];
  std::string out;
  switch (node.op) {
  case DimOp::Constant:
    out = std::to_string(node.value);
    break;
  case DimOp::Symbol:
    if (size_t(node.value) >= names.size())
      out = "s" + std::to_string(node.value);
    else
      out = quote ? quoted(names[size_t(node.value)]) : std::string(names[size_t(node.value)]);
    break;
  case DimOp::Add: {
    // a + -c and a + b * -1 read as subtractions.
    const Node &rhs = nodes[node.rhs];
    std::string left = print(node.lhs, 1);
    if (rhs.op == DimOp::Constant && rhs.value < 0 && rhs.value != INT64_MIN)
      out = left + " - " + std::to_string(-rhs.value);
    else if (rhs.op == DimOp::Mul && nodes[rhs.rhs].op == DimOp::Constant &&
             nodes[rhs.rhs].value == -1)
      out = left + " - " + print(rhs.lhs, 2);
    else
      out = left + " + " + print(node.rhs, 2);
    break;
  }
  case DimOp::Max:
  case DimOp::Min:
    out = std::string(node.op == DimOp::Max ? "max(" : "min(") + print(node.lhs, 0) + ", " +
          print(node.rhs, 0) + ")";
    break;
  default: {
    const char *symbol = node.op == DimOp::Mul        ? " * "
                         : node.op == DimOp::FloorDiv ? " floordiv "
                         : node.op == DimOp::CeilDiv  ? " ceildiv "
                                                      : " mod ";
    out = print(node.lhs, 2) + symbol + print(node.rhs, 3);
    break;
  }
  }
  return precedence(node) < context ? "(" + out + ")" : out;
}

} // namespace

bool validDims(DimProgram program, size_t symbols) {
  if (!program.words || program.size == 0 || program.size % 2 != 0)
    return false;
  size_t depth = 0;
  for (size_t i = 0; i < program.size; i += 2) {
    int64_t op = program.words[i], argument = program.words[i + 1];
    if (op == int64_t(DimOp::Constant)) {
      ++depth;
    } else if (op == int64_t(DimOp::Symbol)) {
      if (argument < 0 || uint64_t(argument) >= symbols)
        return false;
      ++depth;
    } else if (isBinary(op)) {
      if (argument != 0 || depth < 2)
        return false;
      --depth;
    } else {
      return false;
    }
    if (depth > kMaxDimDepth)
      return false;
  }
  return depth == 1;
}

std::optional<int64_t> evaluateDim(DimProgram program, const std::vector<int64_t> &values) {
  // A manifest's programs are short; a fixed stack keeps evaluation free of
  // allocation, and the loader refuses deeper ones (kMaxDimDepth).
  int64_t stack[kMaxDimDepth];
  size_t depth = 0;
  for (size_t i = 0; i + 1 < program.size; i += 2) {
    int64_t op = program.words[i], argument = program.words[i + 1];
    if (op == int64_t(DimOp::Constant) || op == int64_t(DimOp::Symbol)) {
      if (depth == kMaxDimDepth)
        return std::nullopt;
      if (op == int64_t(DimOp::Symbol) && (argument < 0 || uint64_t(argument) >= values.size()))
        return std::nullopt;
      stack[depth++] = op == int64_t(DimOp::Constant) ? argument : values[size_t(argument)];
      continue;
    }
    if (depth < 2)
      return std::nullopt;
    std::optional<int64_t> result = apply(DimOp(op), stack[depth - 2], stack[depth - 1]);
    if (!result)
      return std::nullopt;
    stack[depth - 2] = *result;
    --depth;
  }
  if (depth != 1)
    return std::nullopt;
  return stack[0];
}

std::optional<size_t> bareSymbol(DimProgram program) {
  if (program.size == 2 && program.words[0] == int64_t(DimOp::Symbol))
    return size_t(program.words[1]);
  return std::nullopt;
}

std::string dimText(DimProgram program, const std::vector<std::string_view> &names, bool quote) {
  std::vector<Node> nodes = tree(program);
  if (nodes.empty())
    return "?";
  return Printer{nodes, names, quote}.print(nodes.size() - 1, 0);
}

std::string quoted(std::string_view name) {
  std::string out = "\"";
  for (unsigned char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c > 0x7e) {
      char escape[5];
      snprintf(escape, sizeof(escape), "\\x%02x", c);
      out += escape;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

} // namespace kiln::format
