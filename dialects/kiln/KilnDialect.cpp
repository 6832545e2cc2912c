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
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

RankedTensorType kiln::channelsLast(RankedTensorType type) {
  SmallVector<int64_t> shape = {type.getDimSize(0)};
  llvm::append_range(shape, type.getShape().drop_front(2));
  shape.push_back(type.getDimSize(1));
  return type.clone(shape);
}

RankedTensorType kiln::channelsFirst(RankedTensorType type) {
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getShape().back()};
  llvm::append_range(shape, type.getShape().drop_front().drop_back());
  return type.clone(shape);
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
