// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Importer.cpp - ONNX model to the kiln dialect ----------------------===//

#include "compiler/onnx/Importer.h"

#include "compiler/onnx/Functions.h"
#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"
#include "compiler/onnx/Tensors.h"
#include "compiler/onnx/Upgrade.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Shapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <queue>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace kiln {

namespace {

std::string joinShape(ArrayRef<int64_t> shape) {
  std::string text;
  for (int64_t dim : shape)
    text += (text.empty() ? "" : "x") + std::to_string(dim);
  return text.empty() ? "scalar" : text;
}

class Importer {
public:
  Importer(MLIRContext &context, StringRef path, const ImportOptions &options)
      : context_(context), path_(path.str()), options_(options), builder_(&context) {
    SmallString<256> dir(path);
    llvm::sys::path::remove_filename(dir);
    modelDir_ = dir.empty() ? "." : std::string(dir);
  }

  OwningOpRef<ModuleOp> run();

private:
  InFlightDiagnostic error() { return emitError(UnknownLoc::get(&context_)) << path_ << ": "; }

  LogicalResult parseModel();
  LogicalResult readOpset();
  LogicalResult checkOperators();
  LogicalResult orderNodes();
  /// Checks the graph inputs that share an initializer's name, which kiln
  /// compiles as that constant: their declared type must be the
  /// initializer's; from IR version 4, where ONNX makes them inputs with a
  /// default, a warning names them.
  LogicalResult checkShadowedInputs();
  /// Gathers the ranges --input-shape gives the symbols of the graph's
  /// inputs, so that a symbol fixed or given a range in one input is so
  /// in all; refuses two inputs that give one symbol different ranges.
  LogicalResult gatherGivenRanges(const onnx::GraphProto &graph);
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &input);
  /// The symbol of dimensions named `name` (a dim_param, or INPUT.D for
  /// an unnamed one), with `range` when --input-shape gives one: the same
  /// name is the same symbol in every input.
  AffineExpr symbolFor(const std::string &name, std::optional<DimRange> range);
  /// The size of dimensions named `name` in an expression of them: the
  /// size --input-shape fixes, or its symbol.
  AffineExpr sizeNamed(StringRef name);
  /// Checks the dimensions that are expressions of others and that
  /// --input-shape also gives: the sizes given must hold every value the
  /// expression takes over its symbols' ranges.
  LogicalResult checkGivenExpressions();
  /// The constant that --input-value makes of `input`.
  FailureOr<DenseElementsAttr> fixedValue(const onnx::ValueInfoProto &input,
                                          const InputValue &value);
  /// Binds an initializer's constant the first time a node reads it.
  LogicalResult materialize(const std::string &name);
  /// Converts one node, named `displayName` in errors.
  LogicalResult importNode(onnx::NodeProto &node, const std::string &displayName);
  /// Converts the nodes of a subgraph (an If's branch) whose node is
  /// `parent`, in their order, into the current block; returns the values
  /// of its outputs.
  FailureOr<SmallVector<Value>> importSubgraph(onnx::GraphProto &graph, StringRef parent);
  std::string displayName(int index) const {
    const onnx::NodeProto &node = model_.graph().node(index);
    return node.name().empty() ? "#" + std::to_string(index) : node.name();
  }

  MLIRContext &context_;
  std::string path_;
  std::string modelDir_;
  const ImportOptions &options_;
  OpBuilder builder_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  std::vector<int> order_;
  llvm::StringMap<onnx::TensorProto *> initializers_;
  llvm::StringMap<Value> values_;
  llvm::StringSet<> consumed_;
  SymbolRanges symbols_;
  /// The ranges --input-shape gives the symbols (dim_params that are a
  /// name alone), with the input and dimension that give each.
  llvm::StringMap<std::tuple<DimRange, std::string, int>> givenRanges_;
  /// A dimension that is an expression of others and that --input-shape
  /// gives too.
  struct GivenExpression {
    std::string input, text;
    int dim;
    AffineExpr size;
    DimRange range;
  };
  std::vector<GivenExpression> givenExpressions_;
};

/// A range as --input-shape writes it: 4, 1..8, 1..8@2.
std::string rangeText(const DimRange &range) {
  std::string text = std::to_string(range.min);
  if (!range.isFixed())
    text += ".." + std::to_string(range.max);
  if (range.opt != range.min)
    text += "@" + std::to_string(range.opt);
  return text;
}

LogicalResult Importer::parseModel() {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return error() << "cannot open: " << std::strerror(errno);
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return error() << "is not a regular file";
  }
  if (info.st_size == 0) {
    ::close(fd);
    return error() << "the file is empty, not an ONNX model";
  }
  // Streaming from the descriptor keeps only the parsed model in memory, not
  // a second copy of the file.
  bool parsed;
  {
    google::protobuf::io::FileInputStream stream(fd);
    parsed = model_.ParseFromZeroCopyStream(&stream);
  }
  ::close(fd);
  if (!parsed)
    return error() << "not a valid ONNX model: the protobuf does not parse "
                      "(the file is truncated, corrupt or not ONNX)";
  if (!model_.has_graph() || model_.ir_version() <= 0)
    return error() << "not an ONNX model: it has no "
                   << (model_.has_graph() ? "IR version" : "graph");
  return success();
}

LogicalResult Importer::readOpset() {
  for (const onnx::OperatorSetIdProto &entry : model_.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset_ = entry.version();
  if (opset_ == 0)
    return error() << "the model imports no opset of the default ONNX domain";
  if (opset_ < kMinOpset) {
    if (llvm::Error why = upgradeOpset(model_, kMinOpset))
      return error() << "opset " << opset_ << " of the default ONNX domain is older than kiln's "
                     << kMinOpset << ", and ONNX's version converter cannot upgrade it: "
                     << llvm::toString(std::move(why));
    opset_ = kMinOpset;
  }
  if (opset_ > kMaxOpset)
    return error() << "opset " << opset_
                   << " of the default ONNX domain is not supported; kiln accepts opsets up to "
                   << kMaxOpset << " (older ones are upgraded to " << kMinOpset << ")";
  return success();
}

LogicalResult Importer::checkOperators() {
  // Gather every problem first, so the user sees all of them at once.
  // Operator (and domain) -> the nodes using it, in order of appearance.
  std::vector<std::pair<std::string, std::vector<std::string>>> unsupported;
  llvm::StringMap<size_t> slot;
  bool failedAny = false;
  const onnx::GraphProto &graph = model_.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::string key = "'" + node.op_type() + "'";
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      key += " from domain '" + node.domain() + "'";
    } else if (const OperatorInfo *info = supportedOperators().find(node.op_type())) {
      if (opset_ < info->sinceOpset) {
        error() << "node '" << displayName(i) << "' (" << node.op_type() << ", opset " << opset_
                << "): the operator first exists in opset " << info->sinceOpset;
        failedAny = true;
      }
      continue;
    }
    auto [it, inserted] = slot.try_emplace(key, unsupported.size());
    if (inserted)
      unsupported.push_back({key, {}});
    unsupported[it->second].second.push_back(displayName(i));
  }
  for (auto &[key, nodes] : unsupported) {
    InFlightDiagnostic diag = error();
    diag << "unsupported operator " << key;
    if (opset_)
      diag << " (opset " << opset_ << ")";
    diag << " at " << nodes.size() << (nodes.size() == 1 ? " node: " : " nodes: ");
    size_t shown = std::min<size_t>(nodes.size(), 10);
    for (size_t n = 0; n < shown; ++n)
      diag << (n ? ", '" : "'") << nodes[n] << "'";
    if (shown < nodes.size())
      diag << " and " << nodes.size() - shown << " more";
  }
  return failure(failedAny || !unsupported.empty());
}

LogicalResult Importer::orderNodes() {
  order_.clear();
  consumed_.clear();
  const onnx::GraphProto &graph = model_.graph();
  // An empty name means "absent" in a node's inputs, so nothing may be
  // defined or returned under it.
  for (const onnx::ValueInfoProto &input : graph.input())
    if (input.name().empty())
      return error() << "a graph input has no name";
  for (const onnx::TensorProto &init : graph.initializer())
    if (init.name().empty())
      return error() << "an initializer has no name";
  for (const onnx::ValueInfoProto &output : graph.output())
    if (output.name().empty())
      return error() << "a graph output has no name";
  // The artifact names its inputs and outputs: each once.
  llvm::StringSet<> inputs, outputs;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!inputs.insert(input.name()).second)
      return error() << "graph input '" << input.name() << "' is listed twice";
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!outputs.insert(output.name()).second)
      return error() << "graph output '" << output.name()
                     << "' is listed twice; a model's outputs need distinct names";
  llvm::StringSet<> available;
  for (const onnx::ValueInfoProto &input : graph.input())
    available.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    available.insert(init.name());

  llvm::StringMap<int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const std::string &output : graph.node(i).output()) {
      if (output.empty())
        continue;
      auto [it, inserted] = producer.try_emplace(output, i);
      if (!inserted || available.contains(output))
        return error() << "value '" << output << "' is defined twice (node '" << displayName(i)
                       << "' and "
                       << (inserted ? "a graph input or initializer"
                                    : "node '" + displayName(it->second) + "'")
                       << ")";
    }

  // Kahn's algorithm, always taking the earliest ready node: a graph already
  // in topological order keeps its file order, and output is deterministic.
  std::vector<int> waiting(graph.node_size(), 0);
  std::vector<std::vector<int>> readers(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string &input : graph.node(i).input()) {
      if (input.empty() || available.contains(input))
        continue;
      consumed_.insert(input);
      auto it = producer.find(input);
      if (it == producer.end())
        return error() << "node '" << displayName(i) << "' (" << graph.node(i).op_type()
                       << ") reads '" << input
                       << "', which no node, graph input or initializer defines";
      readers[it->second].push_back(i);
      ++waiting[i];
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output()) {
    consumed_.insert(output.name());
    if (!available.contains(output.name()) && !producer.count(output.name()))
      return error() << "graph output '" << output.name()
                     << "' is not defined by any node, input or initializer";
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < graph.node_size(); ++i)
    if (waiting[i] == 0)
      ready.push(i);
  while (!ready.empty()) {
    int node = ready.top();
    ready.pop();
    order_.push_back(node);
    for (int reader : readers[node])
      if (--waiting[reader] == 0)
        ready.push(reader);
  }
  if (int(order_.size()) != graph.node_size()) {
    InFlightDiagnostic diag = error();
    diag << "the graph has a cycle; these nodes are on it or depend on it: ";
    int shown = 0;
    for (int i = 0; i < graph.node_size() && shown < 10; ++i)
      if (waiting[i] > 0)
        diag << (shown++ ? ", '" : "'") << displayName(i) << "'";
    return failure();
  }
  return success();
}

LogicalResult Importer::checkShadowedInputs() {
  SmallVector<StringRef> shadowed;
  for (const onnx::ValueInfoProto &input : model_.graph().input()) {
    auto it = initializers_.find(input.name());
    if (it == initializers_.end())
      continue;
    shadowed.push_back(input.name());
    const onnx::TensorProto &init = *it->second;
    if (!input.type().has_tensor_type())
      return error() << "graph input '" << input.name()
                     << "' has an initializer of the same name but is not a tensor";
    const onnx::TypeProto::Tensor &declared = input.type().tensor_type();
    if (declared.elem_type() != init.data_type())
      return error() << "graph input '" << input.name() << "' is declared "
                     << onnxTypeName(declared.elem_type())
                     << ", but the initializer of the same name is "
                     << onnxTypeName(init.data_type());
    if (!declared.has_shape())
      continue;
    bool agrees = declared.shape().dim_size() == init.dims_size();
    for (int d = 0; agrees && d < init.dims_size(); ++d)
      agrees = !declared.shape().dim(d).has_dim_value() ||
               declared.shape().dim(d).dim_value() == init.dims(d);
    if (!agrees) {
      SmallVector<int64_t> initShape(init.dims().begin(), init.dims().end());
      return error() << "graph input '" << input.name()
                     << "' is declared with another shape than the initializer of the same name ("
                     << joinShape(initShape) << ")";
    }
  }
  // Before IR version 4 every initializer had to be listed as an input;
  // since, such an input is one the caller may override. The artifact
  // takes no such input: say so.
  if (!shadowed.empty() && model_.ir_version() >= 4) {
    InFlightDiagnostic warning =
        emitWarning(UnknownLoc::get(&context_))
        << path_ << ": " << shadowed.size()
        << (shadowed.size() == 1 ? " graph input has" : " graph inputs have")
        << " an initializer of the same name (";
    size_t shown = std::min<size_t>(shadowed.size(), 3);
    for (size_t i = 0; i < shown; ++i)
      warning << (i ? ", '" : "'") << shadowed[i] << "'";
    if (shown < shadowed.size())
      warning << " and " << shadowed.size() - shown << " more";
    warning << "): kiln compiles "
            << (shadowed.size() == 1 ? "it as that constant" : "each as that constant")
            << ", so the artifact does not take "
            << (shadowed.size() == 1 ? "it as an input" : "them as inputs");
  }
  return success();
}

FailureOr<RankedTensorType> Importer::inputType(const onnx::ValueInfoProto &input) {
  const std::string &name = input.name();
  if (!input.type().has_tensor_type())
    return error() << "graph input '" << name
                   << "' is not a tensor; sequences, maps and optionals are not supported";
  const onnx::TypeProto::Tensor &tensor = input.type().tensor_type();
  Type element = elementTypeOf(context_, tensor.elem_type());
  if (!element)
    return error() << "graph input '" << name << "' has element type "
                   << onnxTypeName(tensor.elem_type()) << ", which kiln does not support";

  if (!tensor.has_shape() && !options_.inputShapes.count(name))
    return error() << "graph input '" << name << "' has no shape; give one with --input-shape "
                   << name << "=...";
  auto given = options_.inputShapes.find(name);
  int rank = tensor.has_shape() ? tensor.shape().dim_size() : 0;
  if (given != options_.inputShapes.end()) {
    if (tensor.has_shape() && rank != int(given->second.size()))
      return error() << "--input-shape gives input '" << name << "' rank " << given->second.size()
                     << ", but the model declares rank " << rank;
    rank = int(given->second.size());
  }
  Dims dims;
  for (int d = 0; d < rank; ++d) {
    const onnx::TensorShapeProto::Dimension *declared =
        tensor.has_shape() ? &tensor.shape().dim(d) : nullptr;
    // A size the model fixes; -1 is how some exporters (Paddle's) write a
    // dimension they leave open. (0 stays a size: ONNX's own tests take
    // empty tensors.)
    bool fixedByModel = declared && declared->has_dim_value() && declared->dim_value() >= 0;
    std::optional<DimRange> range;
    if (given != options_.inputShapes.end())
      range = given->second[d];
    if (range && fixedByModel && (!range->isFixed() || range->min != declared->dim_value()))
      return error() << "--input-shape gives input '" << name << "' dimension " << d << " size "
                     << (range->isFixed()
                             ? std::to_string(range->min)
                             : std::to_string(range->min) + ".." + std::to_string(range->max))
                     << ", but the model fixes it at " << declared->dim_value();
    if (fixedByModel) {
      dims.push_back(getAffineConstantExpr(declared->dim_value(), &context_));
      continue;
    }
    StringRef param = declared ? StringRef(declared->dim_param()) : StringRef();
    if (std::optional<AffineExpr> size = parseDimExpression(
            param, &context_, [&](StringRef symbol) { return sizeNamed(symbol); })) {
      auto bounds = symbols_.bounds(*size);
      if (bounds && bounds->first < 0)
        return error() << "graph input '" << name << "' has dimension " << d << " '" << param
                       << "', which is " << bounds->first
                       << " at some sizes of its symbols; give them ranges with --input-shape "
                          "that keep it from being negative";
      if (range)
        givenExpressions_.push_back({name, param.str(), d, *size, *range});
      dims.push_back(*size);
      continue;
    }
    if (auto it = givenRanges_.find(param); !range && !param.empty() && it != givenRanges_.end())
      range = std::get<DimRange>(it->second);
    if (range && range->isFixed()) {
      dims.push_back(getAffineConstantExpr(range->min, &context_));
      continue;
    }
    dims.push_back(symbolFor(param.empty() ? name + "." + std::to_string(d) : param.str(), range));
  }
  RankedTensorType type = tensorOf(dims, element);
  // Memory is planned for the largest sizes: their element count must fit.
  if (isSymbolic(type) && !symbols_.bounds(productOf(&context_, dims)))
    return error() << "graph input '" << name << "' has shape " << printDims(dims, symbols_.names())
                   << ", whose element count at its symbols' largest sizes overflows 64 bits";
  if (!isKilnTensor(type))
    return error() << "graph input '" << name << "' has shape "
                   << (isSymbolic(type) ? printDims(dims, {}) : joinShape(type.getShape()))
                   << ", whose element count is negative or overflows 64 bits";
  return type;
}

LogicalResult Importer::gatherGivenRanges(const onnx::GraphProto &graph) {
  for (const onnx::ValueInfoProto &input : graph.input()) {
    auto given = options_.inputShapes.find(input.name());
    if (given == options_.inputShapes.end() || !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape())
      continue;
    const onnx::TensorShapeProto &declared = input.type().tensor_type().shape();
    if (declared.dim_size() != int(given->second.size()))
      continue; // inputType says so.
    for (int d = 0; d < declared.dim_size(); ++d) {
      StringRef param = declared.dim(d).dim_param();
      if (param.empty() || declared.dim(d).has_dim_value() ||
          parseDimExpression(param, &context_,
                             [&](StringRef) { return getAffineSymbolExpr(0, &context_); }))
        continue;
      const DimRange &range = given->second[d];
      auto [it, inserted] = givenRanges_.try_emplace(param, range, input.name(), d);
      auto &[known, source, sourceDim] = it->second;
      if (!inserted && !(known == range))
        return error() << "--input-shape gives input '" << input.name() << "' dimension " << d
                       << " (symbol '" << param << "') " << rangeText(range) << ", but input '"
                       << source << "' dimension " << sourceDim << " " << rangeText(known)
                       << ": one symbol takes one range";
    }
  }
  return success();
}

AffineExpr Importer::symbolFor(const std::string &name, std::optional<DimRange> range) {
  auto [it, inserted] = symbols_.index.try_emplace(name, symbols_.symbols.size());
  if (inserted)
    symbols_.symbols.push_back({name, defaultRange(name)});
  if (range)
    symbols_.symbols[it->second].second = *range;
  return getAffineSymbolExpr(it->second, &context_);
}

AffineExpr Importer::sizeNamed(StringRef name) {
  auto it = givenRanges_.find(name);
  if (it == givenRanges_.end())
    return symbolFor(name.str(), std::nullopt);
  const DimRange &range = std::get<DimRange>(it->second);
  if (range.isFixed())
    return getAffineConstantExpr(range.min, &context_);
  return symbolFor(name.str(), range);
}

LogicalResult Importer::checkGivenExpressions() {
  for (const GivenExpression &given : givenExpressions_) {
    auto bounds = symbols_.bounds(given.size);
    if (bounds && given.range.min <= bounds->first && bounds->second <= given.range.max &&
        (!given.range.isFixed() || bounds->first == bounds->second))
      continue;
    InFlightDiagnostic diagnostic = error();
    diagnostic << "--input-shape gives input '" << given.input << "' dimension " << given.dim << " "
               << rangeText(given.range) << ", but the model declares it '" << given.text << "'";
    if (bounds)
      diagnostic << ", which is " << bounds->first
                 << (bounds->first == bounds->second ? "" : " to " + std::to_string(bounds->second))
                 << " at the sizes of its symbols";
    return diagnostic << "; give the symbols their sizes in the inputs where they stand alone";
  }
  return success();
}

/// The runtime's name of an element type (f32, u8, bool, ...).
std::string dtypeName(Type element) {
  if (element.isInteger(1))
    return "bool";
  if (auto integer = dyn_cast<IntegerType>(element))
    return (integer.isUnsigned() ? "u" : "i") + std::to_string(integer.getWidth());
  if (element.isBF16())
    return "bf16";
  if (element.isF16() || element.isF32() || element.isF64())
    return "f" + std::to_string(element.getIntOrFloatBitWidth());
  std::string name;
  llvm::raw_string_ostream(name) << element;
  return name;
}

FailureOr<DenseElementsAttr> Importer::fixedValue(const onnx::ValueInfoProto &input,
                                                  const InputValue &value) {
  const std::string &name = input.name();
  if (!input.type().has_tensor_type())
    return error() << "--input-value names '" << name << "', which is not a tensor";
  const onnx::TypeProto::Tensor &tensor = input.type().tensor_type();
  Type element = elementTypeOf(context_, tensor.elem_type());
  if (!element || dtypeName(element) != value.dtype)
    return error() << "--input-value gives input '" << name << "' " << value.dtype
                   << " elements, but the model declares "
                   << (element ? dtypeName(element) : onnxTypeName(tensor.elem_type()));
  if (tensor.has_shape()) {
    const onnx::TensorShapeProto &declared = tensor.shape();
    bool matches = declared.dim_size() == int(value.shape.size());
    for (int d = 0; matches && d < declared.dim_size(); ++d)
      matches = !declared.dim(d).has_dim_value() || declared.dim(d).dim_value() == value.shape[d];
    if (!matches)
      return error() << "--input-value gives input '" << name << "' shape "
                     << joinShape(value.shape) << ", which the model's declared shape rules out";
  }
  auto type = RankedTensorType::get(value.shape, element);
  std::optional<int64_t> count = elementCount(value.shape);
  size_t width = element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  if (!count || value.data.size() != size_t(*count) * width)
    return error() << "--input-value gives input '" << name << "' " << value.data.size()
                   << " bytes for shape " << joinShape(value.shape);
  if (element.isInteger(1)) {
    SmallVector<bool> bits;
    for (char byte : value.data)
      bits.push_back(byte != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(value.data));
}

LogicalResult Importer::materialize(const std::string &name) {
  if (name.empty() || values_.count(name))
    return success();
  auto it = initializers_.find(name);
  if (it == initializers_.end())
    return success();
  llvm::Expected<ElementsAttr> value = tensorToAttr(context_, *it->second, modelDir_);
  if (!value)
    return error() << llvm::toString(value.takeError());
  values_[name] = ConstantOp::create(builder_, NameLoc::get(builder_.getStringAttr(name)),
                                     value->getType(), *value);
  return success();
}

LogicalResult Importer::importNode(onnx::NodeProto &node, const std::string &displayName) {
  for (const std::string &input : node.input())
    if (failed(materialize(input)))
      return failure();
  NodeContext ctx(node, opset_, path_, modelDir_, displayName, builder_, values_, consumed_,
                  symbols_);
  ctx.setSubgraphImporter(
      [this, displayName](onnx::GraphProto &graph) { return importSubgraph(graph, displayName); });
  const OperatorInfo *info = supportedOperators().find(node.op_type());
  if (!info->takesSymbols)
    for (int i = 0; i < node.input_size(); ++i)
      if (ctx.hasInput(i) && isSymbolic(ctx.input(i).getType()))
        return ctx.error() << "kiln does not take symbolic dimensions for " << node.op_type()
                           << " yet, and input " << i << " has shape "
                           << printDims(dimsOf(ctx.input(i).getType()), symbols_.names())
                           << ": fix its symbols with --input-shape NAME=D0xD1x...";
  if (failed(info->convert(ctx)))
    return failure();
  // A product records the tensors it reads, by the names calibration files
  // use.
  if (node.output_size() > 0)
    if (Value output = values_.lookup(node.output(0));
        output && isa_and_nonnull<ConvOp, GemmOp, MatMulOp>(output.getDefiningOp())) {
      SmallVector<Attribute> inputs;
      for (const std::string &input : node.input())
        inputs.push_back(builder_.getStringAttr(input));
      output.getDefiningOp()->setAttr("kiln.inputs", builder_.getArrayAttr(inputs));
    }
  for (int i = 0; i < node.output_size(); ++i)
    if (ctx.isOutputUsed(i) && !values_.count(node.output(i)))
      return ctx.error() << "output " << i << " ('" << node.output(i)
                         << "') is read, but kiln does not compute it";
  return success();
}

FailureOr<SmallVector<Value>> Importer::importSubgraph(onnx::GraphProto &graph, StringRef parent) {
  for (onnx::TensorProto &init : *graph.mutable_initializer())
    initializers_[init.name()] = &init;
  // Whatever the subgraph reads counts as used.
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &input : node.input())
      consumed_.insert(input);
  for (const onnx::ValueInfoProto &output : graph.output())
    consumed_.insert(output.name());
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto &node = *graph.mutable_node(i);
    std::string name =
        parent.str() + "/" + (node.name().empty() ? "#" + std::to_string(i) : node.name());
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return error() << "node '" << name << "': unsupported operator '" << node.op_type()
                     << "' from domain '" << node.domain() << "'";
    if (!supportedOperators().find(node.op_type()))
      return error() << "node '" << name << "': unsupported operator '" << node.op_type() << "'";
    for (const std::string &input : node.input())
      if (!input.empty() && !values_.count(input) && !initializers_.count(input))
        return error() << "node '" << name << "' (" << node.op_type() << ") reads '" << input
                       << "', which nothing before it defines";
    if (failed(importNode(node, name)))
      return failure();
  }
  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (failed(materialize(output.name())))
      return failure();
    Value value = values_.lookup(output.name());
    if (!value)
      return error() << "the subgraph of node '" << parent << "' returns '" << output.name()
                     << "', which it does not define";
    results.push_back(value);
  }
  return results;
}

OwningOpRef<ModuleOp> Importer::run() {
  context_.loadDialect<KilnDialect, func::FuncDialect>();
  if (failed(parseModel()))
    return nullptr;
  // ONNX's version converter and function builders trust the graph they
  // are given: it is checked before they see it (and again after, since
  // local functions bring nodes of their own).
  if (failed(orderNodes()))
    return nullptr;
  if (failed(readOpset())) {
    // Without the default domain, the operators of other domains are the
    // rest of the story.
    if (opset_ == 0)
      (void)checkOperators();
    return nullptr;
  }
  if (llvm::Error why = expandFunctions(model_, opset_, [](const onnx::NodeProto &node) {
        return supportedOperators().find(node.op_type()) != nullptr;
      }))
    return (error() << llvm::toString(std::move(why))), nullptr;
  if (failed(checkOperators()) || failed(orderNodes()))
    return nullptr;

  onnx::GraphProto &graph = *model_.mutable_graph();
  for (onnx::TensorProto &init : *graph.mutable_initializer())
    initializers_[init.name()] = &init;

  if (failed(checkShadowedInputs()))
    return nullptr;

  // --input-shape and --input-value must name real inputs.
  llvm::StringSet<> inputNames;
  for (const onnx::ValueInfoProto &input : graph.input())
    inputNames.insert(input.name());
  for (const auto &entry : options_.inputShapes)
    if (!inputNames.contains(entry.getKey()) || initializers_.count(entry.getKey()))
      return (error() << "--input-shape names '" << entry.getKey()
                      << "', which is not a graph input"),
             nullptr;
  for (const auto &entry : options_.inputValues) {
    if (!inputNames.contains(entry.getKey()) || initializers_.count(entry.getKey()))
      return (error() << "--input-value names '" << entry.getKey()
                      << "', which is not a graph input"),
             nullptr;
    if (options_.inputShapes.count(entry.getKey()))
      return (error() << "both --input-shape and --input-value name '" << entry.getKey()
                      << "'; the value fixes the shape"),
             nullptr;
  }

  if (failed(gatherGivenRanges(graph)))
    return nullptr;
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  SmallVector<std::pair<std::string, DenseElementsAttr>> fixed;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers_.count(input.name()))
      continue; // An initializer listed as an input (IR version < 4).
    if (auto value = options_.inputValues.find(input.name()); value != options_.inputValues.end()) {
      FailureOr<DenseElementsAttr> attr = fixedValue(input, value->second);
      if (failed(attr))
        return nullptr;
      fixed.push_back({input.name(), *attr});
      continue;
    }
    FailureOr<RankedTensorType> type = inputType(input);
    if (failed(type))
      return nullptr;
    argTypes.push_back(*type);
    argNames.push_back(input.name());
  }
  if (failed(checkGivenExpressions()))
    return nullptr;

  Location fileLoc = FileLineColLoc::get(&context_, path_, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr("kiln.source", builder_.getStringAttr(llvm::sys::path::filename(path_)));
  (*module)->setAttr("kiln.opset", builder_.getI64IntegerAttr(opset_));

  builder_.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(builder_, fileLoc, "main", builder_.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    values_[name] = body->getArgument(i);
    func.setArgAttr(i, "kiln.name", builder_.getStringAttr(name));
  }
  builder_.setInsertionPointToEnd(body);
  for (auto &[name, value] : fixed)
    values_[name] = ConstantOp::create(builder_, NameLoc::get(builder_.getStringAttr(name)),
                                       value.getType(), value);

  for (int index : order_)
    if (failed(importNode(*graph.mutable_node(index), displayName(index))))
      return nullptr;

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (failed(materialize(output.name())))
      return nullptr;
    results.push_back(values_.lookup(output.name()));
    resultTypes.push_back(results.back().getType());
  }
  func::ReturnOp::create(builder_, fileLoc, results);
  // Folding the shape arithmetic leaves its intermediate constants unused.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setFunctionType(builder_.getFunctionType(argTypes, resultTypes));
  // The ranges as the nodes narrowed them.
  if (!symbols_.symbols.empty()) {
    SmallVector<Attribute> symbols;
    for (const auto &[name, range] : symbols_.symbols)
      symbols.push_back(SymbolAttr::get(&context_, name, range.min, range.max, range.opt));
    (*module)->setAttr(kSymbolsAttr, builder_.getArrayAttr(symbols));
  }
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "kiln.name", builder_.getStringAttr(output.name()));
  return module;
}

} // namespace

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, StringRef path,
                                     const ImportOptions &options) {
  Importer importer(context, path, options);
  return importer.run();
}

llvm::Error parseInputShape(StringRef spec, ImportOptions &options) {
  auto [name, text] = spec.rsplit('=');
  if (name.empty() || text.empty() || !spec.contains('='))
    return llvm::createStringError("--input-shape wants NAME=D0xD1x..., got '" + spec + "'");
  auto [dims, opts] = text.split('@');
  auto invalid = [&](StringRef part, StringRef what) {
    return llvm::createStringError("--input-shape: '" + part + "' in '" + spec + "' is not " +
                                   what);
  };
  std::vector<DimRange> shape;
  if (dims != "scalar") {
    SmallVector<StringRef> parts;
    dims.split(parts, 'x');
    for (StringRef part : parts) {
      auto [low, high] = part.split("..");
      DimRange range;
      if (low.getAsInteger(10, range.min) || range.min < 0)
        return invalid(part, "a non-negative dimension or range");
      range.max = range.min;
      if (part.contains("..") && (high.getAsInteger(10, range.max) || range.max < range.min))
        return invalid(part, "a range MIN..MAX with MIN <= MAX");
      range.opt = range.min;
      shape.push_back(range);
    }
  }
  if (text.contains('@')) {
    SmallVector<StringRef> parts;
    opts.split(parts, 'x');
    if (parts.size() != shape.size())
      return llvm::createStringError("--input-shape: '" + spec + "' gives " + Twine(parts.size()) +
                                     " sizes after @ for " + Twine(shape.size()) + " dimensions");
    for (auto [part, range] : llvm::zip(parts, shape))
      if (part.getAsInteger(10, range.opt) || range.opt < range.min || range.opt > range.max)
        return invalid(part, "a size within its dimension's range");
  }
  options.inputShapes[name] = std::move(shape);
  return llvm::Error::success();
}

} // namespace kiln
