// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Symbols.cpp - the model's symbols while it is imported -------------===//

#include "compiler/onnx/Symbols.h"
#include "dialects/kiln/Dims.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/Support/MathExtras.h"

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

std::vector<std::string> SymbolRanges::names() const {
  std::vector<std::string> result;
  for (const auto &symbol : symbols)
    result.push_back(symbol.first);
  return result;
}

} // namespace kiln
