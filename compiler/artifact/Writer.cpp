//===- Writer.cpp - the .kiln artifact ------------------------------------===//

#include "compiler/artifact/Writer.h"

#include "artifact_generated.h"
#include "format.h"

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
  if (type.isF32()) return D::F32;
  if (type.isF16()) return D::F16;
  if (type.isBF16()) return D::BF16;
  if (type.isF64()) return D::F64;
  if (isa<Float8E4M3FNType>(type)) return D::F8E4M3FN;
  if (isa<Float8E5M2Type>(type)) return D::F8E5M2;
  if (type.isInteger(1)) return D::Bool;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    bool isUnsigned = integer.isUnsigned();
    switch (integer.getWidth()) {
    case 8: return isUnsigned ? D::U8 : D::I8;
    case 16: return isUnsigned ? D::U16 : D::I16;
    case 32: return isUnsigned ? D::U32 : D::I32;
    case 64: return isUnsigned ? D::U64 : D::I64;
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

FailureOr<std::pair<std::vector<TensorSignature>, std::vector<TensorSignature>>>
readSignature(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("the module has no @main");
  std::vector<TensorSignature> inputs, outputs;
  auto nameOf = [](DictionaryAttr attrs, unsigned index, const char *prefix) {
    if (auto name = attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr())
      return name.str();
    return std::string(prefix) + std::to_string(index);
  };
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    inputs.push_back({nameOf(main.getArgAttrDict(i), i, "input"),
                      cast<RankedTensorType>(main.getArgumentTypes()[i])});
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    outputs.push_back({nameOf(main.getResultAttrDict(i), i, "output"),
                       cast<RankedTensorType>(main.getResultTypes()[i])});
  return std::make_pair(std::move(inputs), std::move(outputs));
}

FailureOr<std::string> writeArtifact(ModuleOp planned, ArrayRef<TensorSignature> inputs,
                                     ArrayRef<TensorSignature> outputs, StringRef hostTarget,
                                     StringRef hostCode) {
  auto arenaBytes = planned->getAttrOfType<IntegerAttr>("kiln.arena_bytes");
  auto weightsBytes = planned->getAttrOfType<IntegerAttr>("kiln.weights_bytes");
  auto weights = planned->getAttrOfType<ArrayAttr>("kiln.weights");
  auto kernels = planned->getAttrOfType<ArrayAttr>("kiln.kernels");
  if (!arenaBytes || !weightsBytes || !weights || !kernels)
    return planned.emitError("the module's memory and kernels have not been planned");

  for (const TensorSignature &tensor : llvm::concat<const TensorSignature>(inputs, outputs))
    if (!dtypeOf(tensor.type.getElementType()))
      return planned.emitError("'") << tensor.name << "' has element type "
                                    << tensor.type.getElementType()
                                    << ", which the runtime cannot pass";
  std::string source;
  if (auto name = planned->getAttrOfType<StringAttr>("kiln.source"))
    source = name.str();

  // Every field is written, zeros too, so the manifest's size does not
  // depend on the offsets it records: build it once to learn its size, then
  // again with the offsets that follow from it.
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);
  auto tensors = [&](ArrayRef<TensorSignature> list) {
    std::vector<flatbuffers::Offset<artifact::Tensor>> result;
    for (const TensorSignature &tensor : list) {
      std::vector<int64_t> shape(tensor.type.getShape().begin(), tensor.type.getShape().end());
      result.push_back(artifact::CreateTensorDirect(
          builder, tensor.name.c_str(), *dtypeOf(tensor.type.getElementType()), &shape));
    }
    return result;
  };
  auto buildManifest = [&](uint64_t codeOffset, uint64_t weightsOffset) {
    builder.Clear();
    auto in = tensors(inputs), out = tensors(outputs);
    std::vector<flatbuffers::Offset<artifact::Code>> code = {artifact::CreateCodeDirect(
        builder, hostTarget.str().c_str(), artifact::CodeKind::HostSharedObject, codeOffset,
        hostCode.size())};
    std::vector<flatbuffers::Offset<artifact::Kernel>> kernelList;
    for (Attribute entry : kernels) {
      auto dict = cast<DictionaryAttr>(entry);
      auto text = [&](StringRef key) { return dict.getAs<StringAttr>(key).str(); };
      kernelList.push_back(artifact::CreateKernelDirect(
          builder, text("kind").c_str(), text("node").c_str(), text("buffer").c_str(),
          dict.getAs<IntegerAttr>("offset").getInt(), dict.getAs<IntegerAttr>("bytes").getInt(),
          text("precision").c_str(), text("layout").c_str()));
    }
    builder.Finish(artifact::CreateModelDirect(builder, "kiln 0.1", source.c_str(), &in, &out,
                                               arenaBytes.getInt(), weightsOffset,
                                               weightsBytes.getInt(), &code, &kernelList),
                   artifact::ModelIdentifier());
  };
  buildManifest(0, 0);
  size_t manifestSize = builder.GetSize();
  uint64_t codeOffset = llvm::alignTo(KILN_HEADER_SIZE + manifestSize, KILN_SECTION_ALIGNMENT);
  uint64_t weightsOffset = llvm::alignTo(codeOffset + hostCode.size(), KILN_WEIGHTS_ALIGNMENT);
  buildManifest(codeOffset, weightsOffset);
  if (builder.GetSize() != manifestSize)
    return planned.emitError("internal error: the manifest changed size");

  std::string bytes(KILN_HEADER_SIZE, '\0');
  bytes.append(reinterpret_cast<const char *>(builder.GetBufferPointer()), manifestSize);
  bytes.resize(codeOffset, '\0');
  bytes.append(hostCode.data(), hostCode.size());
  bytes.resize(weightsOffset, '\0');
  for (Attribute entry : weights) {
    auto dict = cast<DictionaryAttr>(entry);
    uint64_t offset = dict.getAs<IntegerAttr>("offset").getInt();
    if (bytes.size() > weightsOffset + offset)
      return planned.emitError("internal error: weights overlap");
    bytes.resize(weightsOffset + offset, '\0');
    auto value = dict.getAs<ElementsAttr>("value");
    if (failed(appendWeight(value, bytes, planned)))
      return failure();
    auto type = cast<ShapedType>(value.getType());
    uint64_t expected = type.getNumElements() * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    if (bytes.size() != weightsOffset + offset + expected)
      return planned.emitError("a weight holds ")
             << bytes.size() - weightsOffset - offset << " bytes, but its type needs " << expected;
  }
  bytes.resize(weightsOffset + weightsBytes.getInt(), '\0');
  pad(bytes, 8);

  kiln_file_header_t header = {};
  memcpy(header.magic, KILN_MAGIC, 8);
  header.format_version = KILN_FORMAT_VERSION;
  header.header_size = KILN_HEADER_SIZE;
  header.file_size = bytes.size();
  header.manifest_offset = KILN_HEADER_SIZE;
  header.manifest_size = manifestSize;
  memcpy(bytes.data(), &header, sizeof(header));
  header.checksum = kiln_checksum(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  memcpy(bytes.data(), &header, sizeof(header));
  return bytes;
}

} // namespace kiln
