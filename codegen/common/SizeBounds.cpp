// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- SizeBounds.cpp - the range of a size computed from symbols ---------===//

#include "codegen/common/SizeBounds.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

namespace {

using Interval = std::pair<int64_t, int64_t>;
using Cache = llvm::DenseMap<Value, std::optional<Interval>>;

std::optional<Interval> bounds(Value size, Cache &cache);

/// The range of symbol argument `argument`, from the module's kiln.symbols.
std::optional<Interval> symbolRange(BlockArgument argument) {
  auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
  if (!function)
    return std::nullopt;
  auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kSymbolArgAttr);
  auto module = function->getParentOfType<ModuleOp>();
  auto symbols = module ? module->getAttrOfType<ArrayAttr>(kSymbolsAttr) : nullptr;
  if (!name || !symbols)
    return std::nullopt;
  for (Attribute entry : symbols)
    if (auto symbol = dyn_cast<SymbolAttr>(entry); symbol && symbol.getName() == name.getValue())
      return Interval{symbol.getMin(), symbol.getMax()};
  return std::nullopt;
}

/// The static size `dim` reads, when its dimension is static.
std::optional<Interval> staticDim(Value source, std::optional<int64_t> index) {
  auto type = dyn_cast<ShapedType>(source.getType());
  if (!type || !index || *index >= type.getRank() || type.isDynamicDim(*index))
    return std::nullopt;
  return Interval{type.getDimSize(*index), type.getDimSize(*index)};
}

/// [a, b] op [c, d] for an op that grows with both operands (add) or,
/// given non-negative operands, multiplication.
std::optional<Interval> combine(Interval x, Interval y, bool multiply) {
  int64_t low, high;
  if (multiply) {
    if (x.first < 0 || y.first < 0 || llvm::MulOverflow(x.first, y.first, low) ||
        llvm::MulOverflow(x.second, y.second, high))
      return std::nullopt;
    return Interval{low, high};
  }
  if (llvm::AddOverflow(x.first, y.first, low) || llvm::AddOverflow(x.second, y.second, high))
    return std::nullopt;
  return Interval{low, high};
}

/// The value of `condition`, a comparison of sizes, when their bounds
/// decide it in every run.
std::optional<bool> decided(Value condition, Cache &cache) {
  auto compare = condition.getDefiningOp<arith::CmpIOp>();
  if (!compare)
    return std::nullopt;
  auto x = bounds(compare.getLhs(), cache), y = bounds(compare.getRhs(), cache);
  if (!x || !y)
    return std::nullopt;
  auto less = [](Interval a, Interval b) -> std::optional<bool> {
    if (a.second < b.first)
      return true;
    if (a.first >= b.second)
      return false;
    return std::nullopt;
  };
  auto negate = [](std::optional<bool> value) {
    return value ? std::optional(!*value) : std::nullopt;
  };
  switch (compare.getPredicate()) {
  case arith::CmpIPredicate::slt:
    return less(*x, *y);
  case arith::CmpIPredicate::sge:
    return negate(less(*x, *y));
  case arith::CmpIPredicate::sgt:
    return less(*y, *x);
  case arith::CmpIPredicate::sle:
    return negate(less(*y, *x));
  default:
    return std::nullopt;
  }
}

std::optional<Interval> computeBounds(Value size, Cache &cache) {
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return Interval{*constant, *constant};
  if (auto argument = dyn_cast<BlockArgument>(size))
    return symbolRange(argument);
  Operation *op = size.getDefiningOp();
  if (auto dim = dyn_cast<memref::DimOp>(op))
    return staticDim(dim.getSource(), dim.getConstantIndex());
  if (auto dim = dyn_cast<tensor::DimOp>(op))
    return staticDim(dim.getSource(), dim.getConstantIndex());
  if (op->getNumOperands() == 3 && isa<arith::SelectOp>(op)) {
    // A condition the bounds decide picks one side (expandAffineExpr's
    // floor division selects on the sign of a size that has one).
    if (std::optional<bool> condition = decided(op->getOperand(0), cache))
      return bounds(op->getOperand(*condition ? 1 : 2), cache);
    auto x = bounds(op->getOperand(1), cache), y = bounds(op->getOperand(2), cache);
    if (!x || !y)
      return std::nullopt;
    return Interval{std::min(x->first, y->first), std::max(x->second, y->second)};
  }
  if (op->getNumOperands() != 2)
    return std::nullopt;
  auto x = bounds(op->getOperand(0), cache), y = bounds(op->getOperand(1), cache);
  if (!x || !y)
    return std::nullopt;
  if (isa<arith::AddIOp>(op))
    return combine(*x, *y, /*multiply=*/false);
  if (isa<arith::SubIOp>(op)) {
    if (y->first == std::numeric_limits<int64_t>::min())
      return std::nullopt;
    return combine(*x, {-y->second, -y->first}, /*multiply=*/false);
  }
  if (isa<arith::MulIOp>(op))
    return combine(*x, *y, /*multiply=*/true);
  if (isa<arith::MaxSIOp>(op))
    return Interval{std::max(x->first, y->first), std::max(x->second, y->second)};
  if (isa<arith::MinSIOp>(op))
    return Interval{std::min(x->first, y->first), std::min(x->second, y->second)};
  // The memory plan's offsets: unsigned maxima, and sizes rounded down to
  // a power of two (x & -2^k), of sizes that are never negative.
  if (isa<arith::MaxUIOp>(op) && x->first >= 0 && y->first >= 0)
    return Interval{std::max(x->first, y->first), std::max(x->second, y->second)};
  if (isa<arith::AndIOp>(op) && x->first >= 0 && y->first == y->second && y->first < 0 &&
      llvm::isPowerOf2_64(uint64_t(-y->first)))
    return Interval{x->first & y->first, x->second & y->first};
  // Divisions and remainders by a positive constant.
  if (y->first != y->second || y->first <= 0)
    return std::nullopt;
  int64_t divisor = y->first;
  if (isa<arith::DivSIOp>(op)) // truncates: grows with the numerator
    return Interval{x->first / divisor, x->second / divisor};
  if (isa<arith::FloorDivSIOp>(op))
    return Interval{llvm::divideFloorSigned(x->first, divisor),
                    llvm::divideFloorSigned(x->second, divisor)};
  if (isa<arith::CeilDivSIOp>(op))
    return Interval{llvm::divideCeilSigned(x->first, divisor),
                    llvm::divideCeilSigned(x->second, divisor)};
  if (isa<arith::RemSIOp>(op))
    return Interval{x->first < 0 ? 1 - divisor : 0, divisor - 1};
  return std::nullopt;
}

/// The bounds of `size`, each value's computed once: sizes are DAGs whose
/// operands are shared (a chain of concatenations), which a plain recursion
/// walks in exponential time.
std::optional<Interval> bounds(Value size, Cache &cache) {
  if (auto known = cache.find(size); known != cache.end())
    return known->second;
  std::optional<Interval> result = computeBounds(size, cache);
  cache[size] = result;
  return result;
}

} // namespace

std::optional<Interval> sizeBounds(Value size) {
  Cache cache;
  return bounds(size, cache);
}

std::optional<int64_t> largestBytes(MemRefType type, ValueRange dynamicSizes) {
  int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  auto dynamic = dynamicSizes.begin();
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size)) {
      if (dynamic == dynamicSizes.end())
        return std::nullopt;
      std::optional<Interval> bounds = sizeBounds(*dynamic++);
      if (!bounds || bounds->first < 0)
        return std::nullopt;
      size = bounds->second;
    }
    if (llvm::MulOverflow(bytes, size, bytes))
      return std::nullopt;
  }
  return bytes;
}

} // namespace kiln
