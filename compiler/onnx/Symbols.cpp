// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Symbols.cpp - the model's symbols while it is imported -------------===//

#include "compiler/onnx/Symbols.h"
#include "dialects/kiln/Dims.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

std::optional<std::pair<int64_t, int64_t>> SymbolRanges::bounds(AffineExpr size) const {
  if (std::optional<int64_t> constant = constantOf(size))
    return std::pair{*constant, *constant};
  if (auto symbol = dyn_cast<AffineSymbolExpr>(size)) {
    if (symbol.getPosition() >= symbols.size())
      return std::nullopt;
    const DimRange &range = symbols[symbol.getPosition()].second;
    return std::pair{range.min, range.max};
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(size);
  if (!binary)
    return std::nullopt;
  auto lhs = bounds(binary.getLHS()), rhs = bounds(binary.getRHS());
  if (!lhs || !rhs)
    return std::nullopt;
  auto [a, b] = *lhs;
  auto [c, d] = *rhs;
  int64_t low, high;
  switch (size.getKind()) {
  case AffineExprKind::Add:
    if (llvm::AddOverflow(a, c, low) || llvm::AddOverflow(b, d, high))
      return std::nullopt;
    return std::pair{low, high};
  case AffineExprKind::Mul:
    if (c == d) { // By a constant (MLIR keeps it on the right): any sign.
      if (llvm::MulOverflow(a, c, low) || llvm::MulOverflow(b, c, high))
        return std::nullopt;
      return std::pair{std::min(low, high), std::max(low, high)};
    }
    if (a < 0 || c < 0 || llvm::MulOverflow(a, c, low) || llvm::MulOverflow(b, d, high))
      return std::nullopt;
    return std::pair{low, high};
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
    if (c != d || c <= 0)
      return std::nullopt;
    if (size.getKind() == AffineExprKind::FloorDiv)
      return std::pair{llvm::divideFloorSigned(a, c), llvm::divideFloorSigned(b, c)};
    return std::pair{llvm::divideCeilSigned(a, c), llvm::divideCeilSigned(b, c)};
  default: // Mod
    if (c != d || c <= 0)
      return std::nullopt;
    return std::pair{int64_t(0), c - 1};
  }
}

DimRange defaultRange(StringRef name) {
  DimRange range = kDefaultSymbolRange;
  if (name.contains_insensitive("past"))
    range.min = range.opt = 0;
  return range;
}

namespace {

/// parseDimExpression's grammar, by recursive descent:
///   sum     := product (('+' | '-') product)*
///   product := unary (('*' | '//' | '%') unary)*
///   unary   := '-' unary | '(' sum ')' | INTEGER | NAME
class DimExpressionParser {
public:
  DimExpressionParser(StringRef text, MLIRContext *context,
                      llvm::function_ref<AffineExpr(StringRef)> name)
      : rest_(text), context_(context), name_(name) {}

  std::optional<AffineExpr> parse() {
    std::optional<AffineExpr> result = sum();
    if (!result || !rest_.ltrim().empty() || !sawOperator_)
      return std::nullopt;
    return result;
  }

private:
  bool consume(StringRef token) {
    rest_ = rest_.ltrim();
    if (!rest_.consume_front(token))
      return false;
    sawOperator_ = true;
    return true;
  }

  std::optional<AffineExpr> sum() {
    std::optional<AffineExpr> lhs = product();
    while (lhs) {
      bool plus = consume("+");
      if (!plus && !consume("-"))
        break;
      std::optional<AffineExpr> rhs = product();
      if (!rhs)
        return std::nullopt;
      lhs = plus ? *lhs + *rhs : *lhs - *rhs;
    }
    return lhs;
  }

  std::optional<AffineExpr> product() {
    std::optional<AffineExpr> lhs = unary();
    while (lhs) {
      bool multiply = consume("*"), divide = !multiply && consume("//");
      if (!multiply && !divide && !consume("%"))
        break;
      std::optional<AffineExpr> rhs = unary();
      if (!rhs)
        return std::nullopt;
      if (multiply) {
        lhs = *lhs * *rhs;
        continue;
      }
      std::optional<int64_t> divisor = constantOf(*rhs);
      if (!divisor || *divisor <= 0)
        return std::nullopt;
      lhs = divide ? lhs->floorDiv(*divisor) : *lhs % *divisor;
    }
    return lhs;
  }

  std::optional<AffineExpr> unary() {
    if (consume("-")) {
      std::optional<AffineExpr> operand = unary();
      return operand ? std::optional(-*operand) : std::nullopt;
    }
    if (consume("(")) {
      std::optional<AffineExpr> inner = sum();
      return inner && consume(")") ? inner : std::nullopt;
    }
    rest_ = rest_.ltrim();
    size_t length = std::min(rest_.size(), rest_.find_if_not([](char c) {
      return llvm::isAlnum(c) || c == '_' || c == '.';
    }));
    if (length == 0)
      return std::nullopt;
    StringRef token = rest_.take_front(length);
    rest_ = rest_.drop_front(length);
    if (!llvm::isDigit(token.front()))
      return name_(token);
    int64_t value;
    if (token.getAsInteger(10, value))
      return std::nullopt;
    return getAffineConstantExpr(value, context_);
  }

  StringRef rest_;
  MLIRContext *context_;
  llvm::function_ref<AffineExpr(StringRef)> name_;
  bool sawOperator_ = false;
};

} // namespace

std::optional<AffineExpr> parseDimExpression(StringRef text, MLIRContext *context,
                                             llvm::function_ref<AffineExpr(StringRef)> name) {
  // A first pass that names nothing, so that text which is no expression
  // makes no symbols of its parts.
  AffineExpr placeholder = getAffineSymbolExpr(0, context);
  if (!DimExpressionParser(text, context, [&](StringRef) { return placeholder; }).parse())
    return std::nullopt;
  return DimExpressionParser(text, context, name).parse();
}

std::vector<std::string> SymbolRanges::names() const {
  std::vector<std::string> result;
  for (const auto &symbol : symbols)
    result.push_back(symbol.first);
  return result;
}

} // namespace kiln
