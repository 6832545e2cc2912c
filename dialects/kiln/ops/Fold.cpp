// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Fold.cpp - constant folding helpers for kiln ops -------------------===//

#include "dialects/kiln/ops/Fold.h"
#include "dialects/kiln/KilnDialect.h"

#include "dialects/kiln/Shapes.h"

using namespace mlir;

namespace kiln {

DenseElementsAttr foldableConstant(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || (!dense.isSplat() && dense.getNumElements() > kMaxFoldedElements))
    return nullptr;
  return dense;
}

std::optional<Dims> symbolicElements(Attribute attr) {
  if (auto dims = dyn_cast_or_null<DimsAttr>(attr))
    return Dims(dims.getMap().getResults());
  return std::nullopt;
}

std::optional<Dims> sizeElements(Attribute attr) {
  if (std::optional<Dims> symbolic = symbolicElements(attr))
    return symbolic;
  DenseElementsAttr dense = foldableConstant(attr);
  if (!dense || !dense.getElementType().isInteger() || dense.getNumElements() > 64)
    return std::nullopt;
  Dims dims;
  for (const APInt &value : dense.getValues<APInt>())
    dims.push_back(getAffineConstantExpr(value.getSExtValue(), attr.getContext()));
  return dims;
}

Attribute sizesAttr(RankedTensorType type, ArrayRef<AffineExpr> elements) {
  AffineMap map = dimsMap(type.getContext(), elements);
  if (map.getNumSymbols() != 0)
    return DimsAttr::get(type.getContext(), map);
  SmallVector<APInt> values;
  for (AffineExpr element : map.getResults())
    values.push_back(APInt(type.getElementTypeBitWidth(), *constantOf(element), /*isSigned=*/true));
  return DenseElementsAttr::get(type, values);
}

Attribute remapElements(Attribute input, RankedTensorType type,
                        llvm::function_ref<int64_t(int64_t)> sourceIndex) {
  if (std::optional<Dims> symbolic = symbolicElements(input)) {
    if (!type.hasStaticShape())
      return nullptr;
    Dims result;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
      result.push_back((*symbolic)[sourceIndex(i)]);
    return sizesAttr(type, result);
  }
  DenseElementsAttr dense = foldableConstant(input);
  if (!dense || !type.hasStaticShape())
    return nullptr;
  if (dense.isSplat())
    return DenseElementsAttr::get(type, dense.getSplatValue<Attribute>());
  if (type.getNumElements() > kMaxFoldedElements)
    return nullptr;
  auto values = llvm::to_vector(dense.getValues<Attribute>());
  SmallVector<Attribute> result;
  result.reserve(type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    result.push_back(values[sourceIndex(i)]);
  return DenseElementsAttr::get(type, result);
}

DenseElementsAttr foldElementwise(ArrayRef<Attribute> operands, RankedTensorType type,
                                  ElementFn compute) {
  if (!type.hasStaticShape())
    return nullptr;
  SmallVector<DenseElementsAttr> dense;
  for (Attribute operand : operands) {
    dense.push_back(foldableConstant(operand));
    if (!dense.back())
      return nullptr;
  }
  Type element = type.getElementType();
  if (llvm::all_of(dense, [](DenseElementsAttr d) { return d.isSplat(); })) {
    SmallVector<Attribute> args;
    for (DenseElementsAttr d : dense)
      args.push_back(d.getSplatValue<Attribute>());
    Attribute value = compute(args, element);
    return value ? DenseElementsAttr::get(type, value) : nullptr;
  }
  if (type.getNumElements() > kMaxFoldedElements)
    return nullptr;

  // A splat operand (of any size) is its one value; other operands are no
  // larger than the result, which is small.
  SmallVector<SmallVector<Attribute>> values;
  SmallVector<SmallVector<int64_t>> maps;
  for (DenseElementsAttr d : dense) {
    if (d.isSplat()) {
      values.push_back({d.getSplatValue<Attribute>()});
      maps.emplace_back();
      continue;
    }
    values.push_back(llvm::to_vector(d.getValues<Attribute>()));
    maps.push_back(broadcastIndexMap(d.getType().getShape(), type.getShape()));
  }
  SmallVector<Attribute> result, args(dense.size());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    for (size_t k = 0; k < dense.size(); ++k)
      args[k] = maps[k].empty() ? values[k][0] : values[k][maps[k][i]];
    Attribute value = compute(args, element);
    if (!value)
      return nullptr;
    result.push_back(value);
  }
  return DenseElementsAttr::get(type, result);
}

} // namespace kiln
