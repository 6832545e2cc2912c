// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Importer.h - ONNX model to the kiln dialect --------------*- C++ -*-===//
//
// Reads an .onnx file (and its external data) into a module holding one
// func.func @main of kiln ops with static shapes. Every problem is reported
// through MLIR's diagnostics with the file, node name, operator and opset;
// nothing here aborts on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_IMPORTER_H
#define KILN_COMPILER_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// A graph input's value fixed when compiling (--input-value).
struct InputValue {
  /// The element type as the runtime names it: f32, f16, f64, i8 to i64,
  /// u8 to u64 or bool.
  std::string dtype;
  std::vector<int64_t> shape;
  /// The elements, little-endian in C order (a byte per bool).
  std::string data;
};

struct ImportOptions {
  /// Shapes that replace those of named graph inputs, fixing symbolic
  /// dimensions such as the batch ("input" -> {1, 3, 224, 224}).
  llvm::StringMap<std::vector<int64_t>> inputShapes;
  /// Graph inputs that become constants: the shapes, axes and sizes that
  /// some models take as inputs but kiln must know when compiling. They
  /// leave the compiled model's signature.
  llvm::StringMap<InputValue> inputValues;
};

/// The opsets of the default ONNX domain that the importer accepts.
constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 21;

/// Imports the model at `path`; returns null after reporting errors.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
                                                 const ImportOptions &options);

/// Parses "NAME=D0xD1x..." (as given to --input-shape) into `options`;
/// fails with a message naming the flag and what is wrong.
llvm::Error parseInputShape(llvm::StringRef spec, ImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_IMPORTER_H
