// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- NodeContext.h - what an operator converter sees ----------*- C++ -*-===//
//
// One NodeContext exists per ONNX node while it is converted. It reads the
// node's inputs and attributes, builds kiln ops (inferring their types and
// folding them where their operands are constant), binds the node's outputs,
// and formats errors that name the file, node, operator and opset.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_NODECONTEXT_H
#define KILN_COMPILER_ONNX_NODECONTEXT_H

#include "compiler/onnx/Symbols.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>

namespace kiln {

class NodeContext {
public:
  NodeContext(onnx::NodeProto &node, int64_t opset, llvm::StringRef file, llvm::StringRef modelDir,
              llvm::StringRef displayName, mlir::OpBuilder &builder,
              llvm::StringMap<mlir::Value> &values, const llvm::StringSet<> &consumed,
              SymbolRanges &symbols);

  const onnx::NodeProto &node() const { return node_; }
  /// The node itself, for converters that take over its tensors' buffers.
  onnx::NodeProto &mutableNode() { return node_; }
  llvm::StringRef modelDir() const { return modelDir_; }
  int64_t opset() const { return opset_; }
  mlir::OpBuilder &builder() { return builder_; }
  mlir::Location loc() const { return loc_; }

  /// Converts a subgraph of this node (an If's branch) into the block
  /// being built, returning the values of its outputs.
  using SubgraphImporter =
      std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(onnx::GraphProto &)>;
  void setSubgraphImporter(SubgraphImporter importer) { subgraphs_ = std::move(importer); }
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> importSubgraph(onnx::GraphProto &graph) {
    return subgraphs_(graph);
  }

  /// An error about this node: "FILE: node 'NAME' (OP, opset N): ...".
  mlir::InFlightDiagnostic error();

  /// Makes `size` at most `bound` in every run, because the node `why`
  /// (the end of a sentence: "slices a dimension of 512"): a symbol plus a
  /// constant narrows the symbol's range, with a warning that says so;
  /// another expression must already be within it at its symbols'
  /// maxima. Reports an error when the range would be empty or the
  /// expression cannot be bounded.
  mlir::LogicalResult requireAtMost(mlir::AffineExpr size, int64_t bound, llvm::StringRef why);
  /// The same for `size` at least `bound`: a symbol's least value rises.
  mlir::LogicalResult requireAtLeast(mlir::AffineExpr size, int64_t bound, llvm::StringRef why);
  /// The largest value `size` takes over its symbols' ranges (see
  /// SymbolRanges::bounds).
  std::optional<int64_t> largestValue(mlir::AffineExpr size) const;

  // Inputs. ONNX marks an omitted optional input with an empty name.
  bool hasInput(int index) const;
  /// Reports an error unless the first `count` inputs are all present.
  mlir::LogicalResult requireInputs(int count);
  /// Reports an error unless input `index` holds floats: kiln supports some
  /// operators (Clip, pooling, Pow's base, the math functions) on floats only.
  mlir::LogicalResult requireFloat(int index);
  mlir::Value input(int index) const;
  mlir::RankedTensorType inputType(int index) const;
  /// The values of a constant integer input (axes, shape, pads, ...);
  /// reports an error naming `what` when it is not a constant.
  std::optional<llvm::SmallVector<int64_t>> constantInts(int index, llvm::StringRef what);
  /// The values of an integer input that holds sizes (a shape), constant
  /// or symbolic (computed from a kiln.dims value, see DimsOp); reports an
  /// error naming `what` when it is neither.
  std::optional<Dims> sizeInts(int index, llvm::StringRef what);
  /// The values of a constant float input (Resize's scales), as doubles.
  std::optional<llvm::SmallVector<double>> constantFloats(int index, llvm::StringRef what);
  /// The single value of a constant scalar input (Clip's bounds, ...).
  std::optional<double> constantScalar(int index, llvm::StringRef what);
  /// The elements of a constant input of any type, or null after an error.
  mlir::DenseElementsAttr constantTensor(int index, llvm::StringRef what);

  // Attributes, with ONNX's defaults.
  const onnx::AttributeProto *attribute(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t otherwise) const;
  float floatAttr(llvm::StringRef name, float otherwise) const;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef otherwise) const;
  std::optional<llvm::SmallVector<int64_t>> intsAttr(llvm::StringRef name) const;
  /// The `axis` attribute (`otherwise` when absent) normalized against
  /// `rank`; reports an error and returns nothing when out of range.
  std::optional<int64_t> axisAttr(int64_t otherwise, int64_t rank);

  // Outputs.
  int numOutputs() const { return node_.output_size(); }
  /// Whether a later node or the graph's outputs read output `index`.
  bool isOutputUsed(int index) const;
  void setOutput(int index, mlir::Value value);
  /// Binds output 0 to `value` of a composite, or fails when building it
  /// failed (a null value, after the error was reported).
  mlir::LogicalResult setResult(mlir::Value value);

  /// Builds a kiln op with inferred result types, then folds it when its
  /// operands are constant. Returns its results, or nothing after reporting
  /// why the op is invalid.
  template <typename OpT>
  std::optional<llvm::SmallVector<mlir::Value>>
  create(mlir::ValueRange operands, llvm::ArrayRef<mlir::NamedAttribute> attributes = {},
         unsigned numResults = 1) {
    return createImpl(OpT::getOperationName(), &OpT::inferReturnTypes, operands, attributes,
                      numResults);
  }

  /// The one-result form of create: builds the op and binds it to output 0.
  template <typename OpT>
  mlir::LogicalResult emit(mlir::ValueRange operands,
                           llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    auto results = create<OpT>(operands, attributes);
    if (!results)
      return mlir::failure();
    setOutput(0, results->front());
    return mlir::success();
  }

  /// The one-result form of create for composites: the op's result, or
  /// null after reporting why it is invalid.
  template <typename OpT>
  mlir::Value make(mlir::ValueRange operands,
                   llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    auto results = create<OpT>(operands, attributes);
    return results ? results->front() : mlir::Value();
  }

  /// `value` in a new shape (a kiln.reshape), or null after an error.
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// `value` in new dimensions, symbolic ones among them.
  mlir::Value reshapeDims(mlir::Value value, llvm::ArrayRef<mlir::AffineExpr> dims);
  /// The attributes kiln.reshape and kiln.expand take for a target of
  /// `dims`: its `shape`, and its `dims` when one is symbolic.
  llvm::SmallVector<mlir::NamedAttribute> targetAttrs(llvm::ArrayRef<mlir::AffineExpr> dims);
  /// `value` with elements of type `to` (a kiln.cast unless it has them),
  /// or null after an error (or when `value` is null).
  mlir::Value castTo(mlir::Value value, mlir::Type to);

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return builder_.getNamedAttr(name, value);
  }

  /// A rank-0 kiln.constant of `element` holding `value` (truncated toward
  /// zero for integers).
  mlir::Value scalarConstant(mlir::Type element, double value);
  /// A kiln.constant holding `value`.
  mlir::Value constant(mlir::ElementsAttr value);

private:
  /// requireAtMost and requireAtLeast.
  mlir::LogicalResult requireBound(mlir::AffineExpr size, int64_t bound, bool atMost,
                                   llvm::StringRef why);
  /// Input `index`'s values when it is a constant, inline or a blob (large
  /// initializers are blobs); null otherwise.
  mlir::DenseElementsAttr constantValue(int index) const;
  /// Reports that input `index` (`what`, `kind`) is not known when
  /// compiling, and which graph inputs it comes from: fixing their values
  /// with --input-value would make it known.
  void notConstant(int index, llvm::StringRef what, llvm::StringRef kind);

  using InferFn = llvm::LogicalResult (*)(mlir::MLIRContext *, std::optional<mlir::Location>,
                                          mlir::ValueRange, mlir::DictionaryAttr,
                                          mlir::OpaqueProperties, mlir::RegionRange,
                                          llvm::SmallVectorImpl<mlir::Type> &);
  std::optional<llvm::SmallVector<mlir::Value>>
  createImpl(llvm::StringRef name, InferFn infer, mlir::ValueRange operands,
             llvm::ArrayRef<mlir::NamedAttribute> attributes, unsigned numResults);

  onnx::NodeProto &node_;
  int64_t opset_;
  std::string file_;
  std::string modelDir_;
  std::string displayName_;
  mlir::OpBuilder &builder_;
  llvm::StringMap<mlir::Value> &values_;
  const llvm::StringSet<> &consumed_;
  SymbolRanges &symbols_;
  mlir::Location loc_;
  SubgraphImporter subgraphs_;
};

/// `value` as an attribute of the integer or float type `element`
/// (truncated toward zero for integers).
mlir::Attribute elementAttr(mlir::Type element, double value);

/// Explicit pads for a windowed operator (Conv, pooling): `pads` or
/// `auto_pad` resolved against the spatial input sizes. Also fills in the
/// default strides and dilations. Reports an error and returns nothing when
/// the attributes are inconsistent.
struct WindowAttrs {
  llvm::SmallVector<int64_t> strides, dilations, pads;
};
std::optional<WindowAttrs> resolveWindow(NodeContext &ctx, llvm::ArrayRef<int64_t> spatialSizes,
                                         llvm::ArrayRef<int64_t> kernel);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_NODECONTEXT_H
