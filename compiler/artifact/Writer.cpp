// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Writer.cpp - the .kiln artifact ------------------------------------===//

#include "compiler/artifact/Writer.h"

#include "dialects/kiln/Dims.h"
#include "dialects/kiln/KilnDialect.h"
#include "runtime/format/DimProgram.h"
#include "runtime/format/PlanRecord.h"
#include "runtime/format/artifact_generated.h"
#include "runtime/format/format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;

namespace kiln {

namespace {

std::optional<artifact::DType> dtypeOf(Type type) {
  using D = artifact::DType;
  if (type.isF32())
    return D::F32;
  if (type.isF16())
    return D::F16;
  if (type.isBF16())
    return D::BF16;
  if (type.isF64())
    return D::F64;
  if (isa<Float8E4M3FNType>(type))
    return D::F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return D::F8E5M2;
  if (type.isInteger(1))
    return D::Bool;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    bool isUnsigned = integer.isUnsigned();
    switch (integer.getWidth()) {
    case 8:
      return isUnsigned ? D::U8 : D::I8;
    case 16:
      return isUnsigned ? D::U16 : D::I16;
    case 32:
      return isUnsigned ? D::U32 : D::I32;
    case 64:
      return isUnsigned ? D::U64 : D::I64;
    }
  }
  return std::nullopt;
}

/// Appends the bytes of a weight as the host code reads them: packed,
/// little-endian, one byte per boolean.
LogicalResult appendWeight(ElementsAttr value, std::string &out, ModuleOp module) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return module.emitError("weight '") << resource.getRawHandle().getKey() << "' has no data";
    ArrayRef<char> data = blob->getData();
    out.append(data.data(), data.size());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return module.emitError("a weight has an unsupported attribute kind");
  Type element = dense.getElementType();
  if (element.isInteger(1)) {
    for (bool flag : dense.getValues<bool>())
      out.push_back(flag ? 1 : 0);
    return success();
  }
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat()) {
    out.append(raw.data(), raw.size());
    return success();
  }
  // A splat stores one element: repeat it.
  size_t width = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  for (int64_t i = 0, e = dense.getNumElements(); i < e; ++i)
    out.append(raw.data(), width);
  return success();
}

void pad(std::string &bytes, size_t alignment) {
  bytes.resize(llvm::alignTo(bytes.size(), alignment), '\0');
}

} // namespace

namespace {

/// `dim`, an expression of the symbols, as a program (DimProgram.h).
LogicalResult appendProgram(AffineExpr dim, std::vector<int64_t> &program) {
  using format::DimOp;
  auto step = [&](DimOp op, int64_t argument) {
    program.push_back(int64_t(op));
    program.push_back(argument);
  };
  if (auto constant = dyn_cast<AffineConstantExpr>(dim)) {
    step(DimOp::Constant, constant.getValue());
    return success();
  }
  if (auto symbol = dyn_cast<AffineSymbolExpr>(dim)) {
    step(DimOp::Symbol, symbol.getPosition());
    return success();
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(dim);
  if (!binary || failed(appendProgram(binary.getLHS(), program)) ||
      failed(appendProgram(binary.getRHS(), program)))
    return failure();
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    step(DimOp::Add, 0);
    break;
  case AffineExprKind::Mul:
    step(DimOp::Mul, 0);
    break;
  case AffineExprKind::FloorDiv:
    step(DimOp::FloorDiv, 0);
    break;
  case AffineExprKind::CeilDiv:
    step(DimOp::CeilDiv, 0);
    break;
  case AffineExprKind::Mod:
    step(DimOp::Mod, 0);
    break;
  default:
    return failure();
  }
  return success();
}

FailureOr<TensorSignature> tensorSignature(std::string name, Type type, Operation *at) {
  TensorSignature tensor{std::move(name), cast<RankedTensorType>(type), {}};
  if (!isSymbolic(type))
    return tensor;
  for (AffineExpr dim : dimsOf(type))
    if (failed(appendProgram(dim, tensor.dims.emplace_back())) ||
        tensor.dims.back().size() / 2 > format::kMaxDimDepth)
      return at->emitError("'") << tensor.name << "' has a dimension the artifact cannot record: "
                                << printDim(dim, symbolNames(at->getParentOfType<ModuleOp>()));
  return tensor;
}

} // namespace

FailureOr<Signature> readSignature(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("the module has no @main");
  Signature signature;
  auto nameOf = [](DictionaryAttr attrs, unsigned index, const char *prefix) {
    if (auto name = attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr())
      return name.str();
    return std::string(prefix) + std::to_string(index);
  };
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    FailureOr<TensorSignature> tensor = tensorSignature(nameOf(main.getArgAttrDict(i), i, "input"),
                                                        main.getArgumentTypes()[i], main);
    if (failed(tensor))
      return failure();
    signature.inputs.push_back(std::move(*tensor));
  }
  for (unsigned i = 0; i < main.getNumResults(); ++i) {
    FailureOr<TensorSignature> tensor = tensorSignature(
        nameOf(main.getResultAttrDict(i), i, "output"), main.getResultTypes()[i], main);
    if (failed(tensor))
      return failure();
    signature.outputs.push_back(std::move(*tensor));
  }
  if (auto symbols = module->getAttrOfType<ArrayAttr>(kSymbolsAttr))
    for (auto symbol : symbols.getAsRange<SymbolAttr>())
      signature.symbols.push_back(
          {symbol.getName().str(), symbol.getMin(), symbol.getMax(), symbol.getOpt()});
  // A run learns each symbol's value from an input's dimension.
  for (auto [index, symbol] : llvm::enumerate(signature.symbols)) {
    bool given = llvm::any_of(signature.inputs, [&](const TensorSignature &input) {
      return llvm::any_of(input.dims, [&](const std::vector<int64_t> &dim) {
        return format::bareSymbol({dim.data(), dim.size()}) == index;
      });
    });
    if (!given)
      return module.emitError("symbol '")
             << symbol.name
             << "' is no input's dimension by itself, so a run cannot give its value";
  }
  return signature;
}

namespace {

/// The programs in `dict`'s array `key` (ListLaunches writes them); none
/// where it has none.
std::vector<std::vector<int64_t>> programsOf(DictionaryAttr dict, StringRef key) {
  std::vector<std::vector<int64_t>> programs;
  if (auto list = dict.getAs<ArrayAttr>(key))
    for (auto program : list.getAsRange<DenseI64ArrayAttr>())
      programs.emplace_back(program.asArrayRef().begin(), program.asArrayRef().end());
  return programs;
}

/// A scalar's program, as a list of one; none for a constant.
std::vector<std::vector<int64_t>> scalarProgram(DictionaryAttr arg) {
  if (auto program = arg.getAs<DenseI64ArrayAttr>("program"))
    return {std::vector<int64_t>(program.asArrayRef().begin(), program.asArrayRef().end())};
  return {};
}

/// `dict`'s i64 array `key` as a vector of `T`.
template <typename T> std::vector<T> arrayOf(DictionaryAttr dict, StringRef key) {
  ArrayRef<int64_t> values = dict.getAs<DenseI64ArrayAttr>(key).asArrayRef();
  return std::vector<T>(values.begin(), values.end());
}

/// The bytes `tensor` takes at the symbols' largest values.
uint64_t largestBytes(const TensorSignature &tensor, const Signature &signature) {
  std::vector<int64_t> largest;
  for (const SymbolSignature &symbol : signature.symbols)
    largest.push_back(symbol.max);
  RankedTensorType type = tensor.type;
  uint64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(d);
    if (ShapedType::isDynamic(size)) {
      const std::vector<int64_t> &dim = tensor.dims[d];
      size = format::evaluateDim({dim.data(), dim.size()}, largest).value_or(0);
    }
    bytes *= uint64_t(std::max<int64_t>(size, 0));
  }
  return bytes;
}

std::vector<format::RecordTensor> recordTensors(ArrayRef<TensorSignature> list,
                                                const Signature &signature) {
  std::vector<std::string_view> names;
  for (const SymbolSignature &symbol : signature.symbols)
    names.push_back(symbol.name);
  std::vector<format::RecordTensor> result;
  for (const TensorSignature &tensor : list) {
    RankedTensorType type = tensor.type;
    std::vector<std::string> dims;
    for (auto [size, dim] : llvm::zip(type.getShape(), tensor.dims))
      dims.push_back(ShapedType::isDynamic(size)
                         ? format::dimText({dim.data(), dim.size()}, names, /*quote=*/true)
                         : std::string());
    result.push_back({tensor.name, dtypeOf(type.getElementType()).value_or(artifact::DType(255)),
                      std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
                      std::move(dims), largestBytes(tensor, signature)});
  }
  return result;
}

} // namespace

FailureOr<std::string> planRecord(StringRef target, const Signature &signature, ModuleOp planned) {
  auto arena = planned->getAttrOfType<IntegerAttr>("kiln.arena_bytes");
  auto weights = planned->getAttrOfType<IntegerAttr>("kiln.weights_bytes");
  auto kernels = planned->getAttrOfType<ArrayAttr>("kiln.kernels");
  if (!arena || !weights || !kernels)
    return planned.emitError("the module's memory and kernels have not been planned");
  format::PlanFacts facts;
  facts.target = target;
  for (const SymbolSignature &symbol : signature.symbols)
    facts.symbols.push_back({symbol.name, symbol.min, symbol.max});
  facts.inputs = recordTensors(signature.inputs, signature);
  facts.outputs = recordTensors(signature.outputs, signature);
  facts.arenaBytes = arena.getInt();
  facts.weightsBytes = weights.getInt();
  facts.kernels = kernels.size();
  for (auto kernel : kernels.getAsRange<DictionaryAttr>()) {
    auto launch = kernel.getAs<DictionaryAttr>("launch");
    if (!launch)
      continue;
    format::RecordLaunch &record = facts.launches.emplace_back();
    record.kernel = launch.getAs<StringAttr>("kernel").getValue();
    std::vector<uint32_t> grid = arrayOf<uint32_t>(launch, "grid"),
                          block = arrayOf<uint32_t>(launch, "block");
    if (grid.size() != 3 || block.size() != 3)
      return planned.emitError("a launch's grid or block is not three dimensions");
    llvm::copy(grid, record.grid);
    llvm::copy(block, record.block);
    record.sharedBytes = launch.getAs<IntegerAttr>("shared").getInt();
    record.gridPrograms = programsOf(launch, "grid_programs");
    for (auto arg : launch.getAs<ArrayAttr>("args").getAsRange<DictionaryAttr>()) {
      format::RecordArg &out = record.args.emplace_back();
      auto base = arg.getAs<StringAttr>("base");
      if (!base) {
        out.width = arg.getAs<IntegerAttr>("width").getInt();
        out.bits = uint64_t(arg.getAs<IntegerAttr>("bits").getInt());
        out.programs = scalarProgram(arg);
        continue;
      }
      out.programs = programsOf(arg, "programs");
      out.base = base.getValue();
      out.index = arg.getAs<IntegerAttr>("index").getInt();
      out.byteOffset = arg.getAs<IntegerAttr>("byte_offset").getInt();
      out.offset = arg.getAs<IntegerAttr>("offset").getInt();
      out.sizes = arrayOf<int64_t>(arg, "sizes");
      out.strides = arrayOf<int64_t>(arg, "strides");
      if (auto map = arg.getAs<DictionaryAttr>("tensor_map")) {
        out.mapDims = arrayOf<uint64_t>(map, "dims");
        out.mapStrides = arrayOf<uint64_t>(map, "strides");
        out.mapBox = arrayOf<uint32_t>(map, "box");
        out.swizzle = map.getAs<IntegerAttr>("swizzle").getInt();
      }
    }
  }
  return format::planRecord(facts);
}

namespace {

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<artifact::Dim>>>
buildDims(flatbuffers::FlatBufferBuilder &builder,
          const std::vector<std::vector<int64_t>> &programs) {
  if (programs.empty())
    return 0;
  std::vector<flatbuffers::Offset<artifact::Dim>> dims;
  for (const std::vector<int64_t> &program : programs)
    dims.push_back(artifact::CreateDimDirect(builder, &program));
  return builder.CreateVector(dims);
}

/// A plan's weights as one block of bytes, each weight at its offset.
FailureOr<std::string> weightBlock(ModuleOp planned) {
  auto weightsBytes = planned->getAttrOfType<IntegerAttr>("kiln.weights_bytes");
  auto weights = planned->getAttrOfType<ArrayAttr>("kiln.weights");
  std::string bytes;
  for (Attribute entry : weights) {
    auto dict = cast<DictionaryAttr>(entry);
    uint64_t offset = dict.getAs<IntegerAttr>("offset").getInt();
    if (bytes.size() > offset)
      return planned.emitError("internal error: weights overlap");
    bytes.resize(offset, '\0');
    auto value = dict.getAs<ElementsAttr>("value");
    if (failed(appendWeight(value, bytes, planned)))
      return failure();
    auto type = cast<ShapedType>(value.getType());
    uint64_t expected = type.getNumElements() * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    if (bytes.size() != offset + expected)
      return planned.emitError("a weight holds ")
             << bytes.size() - offset << " bytes, but its type needs " << expected;
  }
  bytes.resize(weightsBytes.getInt(), '\0');
  return bytes;
}

flatbuffers::Offset<artifact::Launch>
buildLaunch(flatbuffers::FlatBufferBuilder &builder, DictionaryAttr launch,
            const llvm::StringMap<KernelResources> &resources) {
  std::vector<flatbuffers::Offset<artifact::LaunchArg>> args;
  for (auto arg : launch.getAs<ArrayAttr>("args").getAsRange<DictionaryAttr>()) {
    if (auto base = arg.getAs<StringAttr>("base")) {
      std::vector<int64_t> shape = arrayOf<int64_t>(arg, "sizes"),
                           strides = arrayOf<int64_t>(arg, "strides");
      flatbuffers::Offset<artifact::TensorMap> map;
      if (auto tensorMap = arg.getAs<DictionaryAttr>("tensor_map")) {
        std::vector<uint64_t> dims = arrayOf<uint64_t>(tensorMap, "dims"),
                              mapStrides = arrayOf<uint64_t>(tensorMap, "strides");
        std::vector<uint32_t> box = arrayOf<uint32_t>(tensorMap, "box");
        map = artifact::CreateTensorMapDirect(builder, &dims, &mapStrides, &box,
                                              tensorMap.getAs<IntegerAttr>("swizzle").getInt());
      }
      auto dims = buildDims(builder, programsOf(arg, "programs"));
      auto baseName = builder.CreateString(base.getValue().str());
      auto sizes = builder.CreateVector(shape);
      auto steps = builder.CreateVector(strides);
      args.push_back(artifact::CreateLaunchArg(
          builder, baseName, arg.getAs<IntegerAttr>("index").getInt(),
          arg.getAs<IntegerAttr>("byte_offset").getInt(), arg.getAs<IntegerAttr>("offset").getInt(),
          sizes, steps, 0, 0, map, dims));
    } else {
      auto dims = buildDims(builder, scalarProgram(arg));
      args.push_back(artifact::CreateLaunchArg(
          builder, 0, 0, 0, 0, 0, 0, arg.getAs<IntegerAttr>("width").getInt(),
          uint64_t(arg.getAs<IntegerAttr>("bits").getInt()), 0, dims));
    }
  }
  std::string name = launch.getAs<StringAttr>("kernel").str();
  std::vector<uint32_t> grid = arrayOf<uint32_t>(launch, "grid"),
                        block = arrayOf<uint32_t>(launch, "block");
  KernelResources used = resources.lookup(name);
  auto gridDims = buildDims(builder, programsOf(launch, "grid_programs"));
  auto kernel = builder.CreateString(name);
  auto grids = builder.CreateVector(grid);
  auto blocks = builder.CreateVector(block);
  auto argList = builder.CreateVector(args);
  return artifact::CreateLaunch(builder, kernel, grids, blocks,
                                launch.getAs<IntegerAttr>("shared").getInt(), argList,
                                used.registers, used.sharedBytes, used.spillBytes,
                                used.scalarRegisters, used.scratchBytes, gridDims);
}

} // namespace

FailureOr<std::string> writeArtifact(const Signature &signature, ArrayRef<CompiledTarget> targets) {
  if (targets.empty())
    return failure();
  ModuleOp first = targets.front().planned;
  ArrayRef<TensorSignature> inputs = signature.inputs, outputs = signature.outputs;
  for (const TensorSignature &tensor : llvm::concat<const TensorSignature>(inputs, outputs))
    if (!dtypeOf(tensor.type.getElementType()))
      return first.emitError("'") << tensor.name << "' has element type "
                                  << tensor.type.getElementType()
                                  << ", which the runtime cannot pass";
  std::string source;
  if (auto name = first->getAttrOfType<StringAttr>("kiln.source"))
    source = name.str();

  // Each target's weights; a block the same as an earlier one is shared.
  std::vector<std::string> blocks;
  std::vector<size_t> blockOf;
  for (const CompiledTarget &target : targets) {
    ModuleOp planned = target.planned;
    if (!planned->getAttrOfType<IntegerAttr>("kiln.arena_bytes") ||
        !planned->getAttrOfType<IntegerAttr>("kiln.weights_bytes") ||
        !planned->getAttrOfType<ArrayAttr>("kiln.weights") ||
        !planned->getAttrOfType<ArrayAttr>("kiln.kernels"))
      return planned.emitError("the module's memory and kernels have not been planned");
    FailureOr<std::string> block = weightBlock(planned);
    if (failed(block))
      return failure();
    auto same = llvm::find(blocks, *block);
    blockOf.push_back(size_t(same - blocks.begin()));
    if (same == blocks.end())
      blocks.push_back(std::move(*block));
  }

  // Every field is written, zeros too, so the manifest's size does not
  // depend on the offsets it records: build it once to learn its size, then
  // again with the offsets that follow from it.
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);
  auto tensors = [&](ArrayRef<TensorSignature> list) {
    std::vector<flatbuffers::Offset<artifact::Tensor>> result;
    for (const TensorSignature &tensor : list) {
      std::vector<int64_t> shape(tensor.type.getShape().begin(), tensor.type.getShape().end());
      for (int64_t &size : shape)
        if (ShapedType::isDynamic(size))
          size = -1;
      std::vector<flatbuffers::Offset<artifact::Dim>> dims;
      for (const std::vector<int64_t> &program : tensor.dims)
        dims.push_back(artifact::CreateDimDirect(builder, &program));
      result.push_back(artifact::CreateTensorDirect(builder, tensor.name.c_str(),
                                                    *dtypeOf(tensor.type.getElementType()), &shape,
                                                    tensor.dims.empty() ? nullptr : &dims));
    }
    return result;
  };
  auto buildManifest = [&](ArrayRef<uint64_t> codeOffsets, ArrayRef<uint64_t> blockOffsets) {
    builder.Clear();
    auto in = tensors(inputs), out = tensors(outputs);
    std::vector<flatbuffers::Offset<artifact::Code>> code;
    std::vector<flatbuffers::Offset<artifact::Plan>> plans;
    size_t section = 0;
    for (auto [index, target] : llvm::enumerate(targets)) {
      for (const auto &[kind, bytes] : target.code)
        code.push_back(artifact::CreateCodeDirect(builder, target.name.c_str(), kind,
                                                  codeOffsets[section++], bytes.size(), index));
      std::vector<flatbuffers::Offset<artifact::Kernel>> kernelList;
      for (auto dict :
           target.planned->getAttrOfType<ArrayAttr>("kiln.kernels").getAsRange<DictionaryAttr>()) {
        auto text = [&](StringRef key) { return dict.getAs<StringAttr>(key).str(); };
        auto flops = dict.getAs<IntegerAttr>("flops");
        flatbuffers::Offset<artifact::Launch> launch;
        if (auto entry = dict.getAs<DictionaryAttr>("launch"))
          launch = buildLaunch(builder, entry, target.resources);
        kernelList.push_back(artifact::CreateKernelDirect(
            builder, text("kind").c_str(), text("node").c_str(), text("buffer").c_str(),
            dict.getAs<IntegerAttr>("offset").getInt(), dict.getAs<IntegerAttr>("bytes").getInt(),
            text("precision").c_str(), text("layout").c_str(), launch, flops ? flops.getInt() : 0,
            bool(dict.get("sizes_only"))));
      }
      size_t block = blockOf[index];
      plans.push_back(artifact::CreatePlanDirect(
          builder, target.planned->getAttrOfType<IntegerAttr>("kiln.arena_bytes").getInt(),
          blockOffsets[block], blocks[block].size(), &kernelList));
    }
    std::vector<flatbuffers::Offset<artifact::Symbol>> symbols;
    for (const SymbolSignature &symbol : signature.symbols)
      symbols.push_back(artifact::CreateSymbolDirect(builder, symbol.name.c_str(), symbol.min,
                                                     symbol.max, symbol.opt));
    builder.Finish(artifact::CreateModelDirect(builder, "kiln 0.1", source.c_str(), &in, &out,
                                               &code, &plans, symbols.empty() ? nullptr : &symbols),
                   artifact::ModelIdentifier());
  };
  size_t sections = 0;
  for (const CompiledTarget &target : targets)
    sections += target.code.size();
  buildManifest(std::vector<uint64_t>(sections, 0), std::vector<uint64_t>(blocks.size(), 0));
  size_t manifestSize = builder.GetSize();

  // Then the code sections and the weight blocks, in order.
  std::string bytes(KILN_HEADER_SIZE, '\0');
  bytes.resize(KILN_HEADER_SIZE + manifestSize, '\0');
  std::vector<uint64_t> codeOffsets, blockOffsets;
  for (const CompiledTarget &target : targets)
    for (const auto &code : target.code) {
      pad(bytes, KILN_SECTION_ALIGNMENT);
      codeOffsets.push_back(bytes.size());
      bytes += code.bytes;
    }
  for (const std::string &block : blocks) {
    pad(bytes, KILN_WEIGHTS_ALIGNMENT);
    blockOffsets.push_back(bytes.size());
    bytes += block;
  }
  pad(bytes, 8);
  buildManifest(codeOffsets, blockOffsets);
  if (builder.GetSize() != manifestSize)
    return first.emitError("internal error: the manifest changed size");
  memcpy(bytes.data() + KILN_HEADER_SIZE, builder.GetBufferPointer(), manifestSize);

  kiln_file_header_t header = {};
  memcpy(header.magic, KILN_MAGIC, 8);
  header.format_version = KILN_FORMAT_VERSION;
  header.header_size = KILN_HEADER_SIZE;
  header.file_size = bytes.size();
  header.manifest_offset = KILN_HEADER_SIZE;
  header.manifest_size = manifestSize;
  memcpy(bytes.data(), &header, sizeof(header));
  if (kiln_artifact_digest(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(),
                           header.digest) != 0)
    return first.emitError("cannot compute the artifact's SHA-256 digest");
  memcpy(bytes.data(), &header, sizeof(header));
  return bytes;
}

} // namespace kiln
