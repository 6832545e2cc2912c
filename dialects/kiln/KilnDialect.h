// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KilnDialect.h - the kiln graph dialect -------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_KILN_KILNDIALECT_H
#define KILN_DIALECTS_KILN_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/kiln/Dims.h"
#include "dialects/kiln/Shapes.h"

#include "dialects/kiln/KilnDialect.h.inc"
#include "dialects/kiln/KilnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/KilnAttrs.h.inc"

namespace kiln {

/// How a binary elementwise op picks its result element type.
enum class BinaryElementRule {
  SameAsOperands, ///< both operands share it (add, sub, mul, div)
  Base,           ///< the left operand's (pow)
  Bool,           ///< i1, with both operands sharing a type (equal)
};

/// Shared result-type inference of op families; each reports through
/// `location` why it fails.
llvm::LogicalResult inferBinaryResult(std::optional<mlir::Location> location, mlir::Type lhs,
                                      mlir::Type rhs, BinaryElementRule rule,
                                      llvm::SmallVectorImpl<mlir::Type> &types);
llvm::LogicalResult inferPoolResult(std::optional<mlir::Location> location, mlir::Type input,
                                    llvm::ArrayRef<int64_t> kernelShape,
                                    llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> pads,
                                    llvm::ArrayRef<int64_t> dilations, bool ceilMode,
                                    bool channelsLast, llvm::SmallVectorImpl<mlir::Type> &types);
llvm::LogicalResult inferReduceResult(std::optional<mlir::Location> location, mlir::Type input,
                                      llvm::ArrayRef<int64_t> axes, bool keepdims,
                                      llvm::SmallVectorImpl<mlir::Type> &types);

/// On the kernels of convolutions and pooling: the layout of the
/// activations they read and write, nchw or nhwc.
constexpr llvm::StringLiteral kLayoutAttr = "kiln.layout";

/// `type` (N x C x D1..Dk) with its channels moved last (N x D1..Dk x C),
/// and back.
mlir::RankedTensorType channelsLast(mlir::RankedTensorType type);
mlir::RankedTensorType channelsFirst(mlir::RankedTensorType type);

/// The ONNX nodes a location names: a kiln op carries its node's NameLoc,
/// or, once graph rewrites fuse nodes, a FusedLoc of theirs.
llvm::SmallVector<llvm::StringRef> onnxNodes(mlir::Location loc);

} // namespace kiln

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.h.inc"

#endif // KILN_DIALECTS_KILN_KILNDIALECT_H
