// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Tensors.h - ONNX tensors and types as MLIR attributes ----*- C++ -*-===//

#ifndef KILN_COMPILER_ONNX_TENSORS_H
#define KILN_COMPILER_ONNX_TENSORS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace kiln {

/// The MLIR element type of an ONNX TensorProto::DataType, or null when kiln
/// has none (strings, complex numbers, ...).
mlir::Type elementTypeOf(mlir::MLIRContext &context, int32_t onnxType);

/// The ONNX name of a TensorProto::DataType, for messages.
std::string onnxTypeName(int32_t onnxType);

/// Turns a TensorProto into a constant. Large tensors become dense_resource
/// blobs that take over the tensor's buffer (the proto's raw_data is moved
/// out, not copied); external data is read only from inside `modelDir`.
/// On failure returns the reason, which the caller reports where the
/// tensor is used.
llvm::Expected<mlir::ElementsAttr>
tensorToAttr(mlir::MLIRContext &context, onnx::TensorProto &tensor, llvm::StringRef modelDir);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_TENSORS_H
