// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Importer.h - ONNX model to the kiln dialect --------------*- C++ -*-===//
//
// Reads an .onnx file (and its external data) into a module holding one
// func.func @main of kiln ops, whose shapes are static or expressions of the
// model's symbols (dialects/kiln/Dims.h). Every problem is reported
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

/// One dimension of a graph input as --input-shape gives it: a size (min
/// == max) or a range of sizes and the size in it that kernels are tuned
/// for.
struct DimRange {
  int64_t min = 0, max = 0, opt = 0;
  bool isFixed() const { return min == max; }
  bool operator==(const DimRange &other) const {
    return min == other.min && max == other.max && opt == other.opt;
  }
};

/// The range a symbolic dimension takes when --input-shape gives it none.
constexpr DimRange kDefaultSymbolRange = {1, 1024, 1};

struct ImportOptions {
  /// Shapes that replace those of named graph inputs: sizes fix a
  /// symbolic dimension such as the batch ("input" -> {1, 3, 224, 224}),
  /// ranges make a dimension symbolic with that range.
  llvm::StringMap<std::vector<DimRange>> inputShapes;
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

/// Parses "NAME=D0xD1x...[@O0xO1x...]" (as given to --input-shape) into
/// `options`: each D a size or a range MIN..MAX, each O the size a range
/// is tuned for (its MIN when no @ follows); fails with a message naming
/// the flag and what is wrong.
llvm::Error parseInputShape(llvm::StringRef spec, ImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_IMPORTER_H
