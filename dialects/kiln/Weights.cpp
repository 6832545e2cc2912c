// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dialects/kiln/Weights.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

namespace kiln {

std::optional<std::vector<float>> readF32(mlir::ElementsAttr value) {
  auto type = mlir::cast<mlir::ShapedType>(value.getType());
  if (!type.getElementType().isF32())
    return std::nullopt;
  size_t count = size_t(type.getNumElements());
  if (auto resource = mlir::dyn_cast<mlir::DenseResourceElementsAttr>(value)) {
    mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != count * sizeof(float))
      return std::nullopt;
    std::vector<float> values(count);
    std::memcpy(values.data(), blob->getData().data(), count * sizeof(float));
    return values;
  }
  if (auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(value)) {
    auto range = dense.getValues<float>();
    return std::vector<float>(range.begin(), range.end());
  }
  return std::nullopt;
}

mlir::DenseElementsAttr denseOf(mlir::ElementsAttr value) {
  if (auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(value))
    return dense;
  auto resource = mlir::dyn_cast<mlir::DenseResourceElementsAttr>(value);
  if (!resource)
    return {};
  mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  auto type = mlir::cast<mlir::ShapedType>(value.getType());
  unsigned bits = type.getElementTypeBitWidth();
  // Blobs hold whole bytes per element; booleans are never blobs.
  if (!blob || bits % 8 != 0 ||
      blob->getData().size() != size_t(type.getNumElements()) * (bits / 8))
    return {};
  return mlir::DenseElementsAttr::getFromRawBuffer(type, blob->getData());
}

mlir::ElementsAttr makeF32(mlir::RankedTensorType type, llvm::ArrayRef<float> values,
                           llvm::StringRef name) {
  if (values.size() * sizeof(float) <= kInlineBytes)
    return mlir::DenseElementsAttr::get(type, values);
  llvm::ArrayRef<char> bytes(reinterpret_cast<const char *>(values.data()),
                             values.size() * sizeof(float));
  return mlir::DenseResourceElementsAttr::get(
      type, name, mlir::HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(float)));
}

std::string derivedName(mlir::ElementsAttr value, llvm::StringRef suffix) {
  if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(value))
    return (resource.getRawHandle().getKey() + "." + suffix).str();
  return suffix.str();
}

} // namespace kiln
