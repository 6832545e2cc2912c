// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KilnDialect.cpp - dialect registration -----------------------------===//

#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;

#include "dialects/kiln/KilnDialect.cpp.inc"
#include "dialects/kiln/KilnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/KilnAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.cpp.inc"

void KilnDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/kiln/KilnAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/KilnOps.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                            Location loc) {
  if (auto sizes = dyn_cast<DimsAttr>(value))
    return DimsOp::create(builder, loc, type, sizes);
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

RankedTensorType kiln::channelsLast(RankedTensorType type) {
  Dims dims = dimsOf(type);
  Dims moved = {dims[0]};
  llvm::append_range(moved, ArrayRef(dims).drop_front(2));
  moved.push_back(dims[1]);
  return withDims(type, moved);
}

RankedTensorType kiln::channelsFirst(RankedTensorType type) {
  Dims dims = dimsOf(type);
  Dims moved = {dims[0], dims.back()};
  llvm::append_range(moved, ArrayRef(dims).drop_front().drop_back());
  return withDims(type, moved);
}

SmallVector<StringRef> kiln::onnxNodes(Location loc) {
  SmallVector<StringRef> nodes;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner)) {
      nodes.push_back(name.getName().getValue());
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  return nodes;
}
