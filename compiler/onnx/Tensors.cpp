// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Tensors.cpp - ONNX tensors and types as MLIR attributes ------------===//

#include "compiler/onnx/Tensors.h"

#include "dialects/kiln/Shapes.h"
#include "dialects/kiln/Weights.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <memory>

using namespace mlir;

namespace kiln {

namespace {

/// The bytes of one tensor and whoever keeps them alive.
struct TensorBytes {
  llvm::ArrayRef<char> bytes;
  AsmResourceBlob::DeleterFn release;
};

std::string describe(const onnx::TensorProto &tensor) { return "tensor '" + tensor.name() + "'"; }

/// Copies the typed repeated fields (float_data, int32_data, ...) into a
/// little-endian buffer, checking that their count matches.
template <typename Source, typename Stored>
bool copyTyped(const google::protobuf::RepeatedField<Source> &field, int64_t count,
               std::vector<char> &out, std::string &error, const onnx::TensorProto &tensor) {
  if (field.size() != count) {
    error = describe(tensor) + " holds " + std::to_string(field.size()) +
            " values but its dims need " + std::to_string(count);
    return false;
  }
  out.resize(count * sizeof(Stored));
  for (int64_t i = 0; i < count; ++i) {
    Stored value = static_cast<Stored>(field.Get(i));
    std::memcpy(out.data() + i * sizeof(Stored), &value, sizeof(Stored));
  }
  return true;
}

/// Reads a tensor's external data from inside `modelDir`.
std::unique_ptr<llvm::MemoryBuffer> readExternal(const onnx::TensorProto &tensor,
                                                 llvm::StringRef modelDir, uint64_t expected,
                                                 std::string &error) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    llvm::StringRef value = entry.value();
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      uint64_t number;
      if (value.getAsInteger(10, number)) {
        error = describe(tensor) + " has an invalid external data " + entry.key() + " '" +
                entry.value() + "'";
        return nullptr;
      }
      (entry.key() == "offset" ? offset : length.emplace()) = number;
    }
  }
  if (location.empty()) {
    error = describe(tensor) + " has external data without a location";
    return nullptr;
  }
  if (llvm::sys::path::is_absolute(location)) {
    error = describe(tensor) + ": external data path '" + location +
            "' is absolute; it must lie inside the model's folder";
    return nullptr;
  }
  // Lexically first, so that a path out of the folder is named as such even
  // when its target does not exist.
  int depth = 0;
  for (llvm::StringRef part :
       llvm::make_range(llvm::sys::path::begin(location), llvm::sys::path::end(location))) {
    depth += part == ".." ? -1 : (part == "." ? 0 : 1);
    if (depth < 0) {
      error =
          describe(tensor) + ": external data path '" + location + "' leaves the model's folder";
      return nullptr;
    }
  }
  llvm::SmallString<256> joined(modelDir), resolved, folder;
  llvm::sys::path::append(joined, location);
  if (llvm::sys::fs::real_path(modelDir, folder) || llvm::sys::fs::real_path(joined, resolved)) {
    error = describe(tensor) + ": cannot open external data file '" + std::string(joined) + "'";
    return nullptr;
  }
  // Resolving symbolic links first means no link can lead outside either.
  if (!llvm::StringRef(resolved).starts_with(std::string(folder) + "/")) {
    error = describe(tensor) + ": external data path '" + location + "' leaves the model's folder";
    return nullptr;
  }
  uint64_t fileSize;
  if (llvm::sys::fs::file_size(resolved, fileSize)) {
    error = describe(tensor) + ": cannot read external data file '" + location + "'";
    return nullptr;
  }
  uint64_t available = offset <= fileSize ? fileSize - offset : 0;
  uint64_t wanted = length.value_or(available);
  if (offset > fileSize || wanted > available) {
    error = describe(tensor) + ": external data (offset " + std::to_string(offset) + ", length " +
            std::to_string(wanted) + ") runs past the end of '" + location + "' (" +
            std::to_string(fileSize) + " bytes)";
    return nullptr;
  }
  if (wanted != expected) {
    error = describe(tensor) + " has " + std::to_string(wanted) +
            " bytes of external data but its dims need " + std::to_string(expected);
    return nullptr;
  }
  auto buffer = llvm::MemoryBuffer::getFileSlice(resolved, expected, offset);
  if (!buffer) {
    error = describe(tensor) + ": cannot read external data file '" + location +
            "': " + buffer.getError().message();
    return nullptr;
  }
  return std::move(*buffer);
}

} // namespace

Type elementTypeOf(MLIRContext &context, int32_t onnxType) {
  Builder b(&context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case 17:
    return b.getType<Float8E4M3FNType>(); // FLOAT8E4M3FN (onnx 1.14)
  case 19:
    return b.getType<Float8E5M2Type>(); // FLOAT8E5M2
  default:
    return nullptr;
  }
}

std::string onnxTypeName(int32_t onnxType) {
  if (onnx::TensorProto::DataType_IsValid(onnxType))
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnxType));
  switch (onnxType) {
  case 17:
    return "FLOAT8E4M3FN";
  case 18:
    return "FLOAT8E4M3FNUZ";
  case 19:
    return "FLOAT8E5M2";
  case 20:
    return "FLOAT8E5M2FNUZ";
  case 21:
    return "UINT4";
  case 22:
    return "INT4";
  }
  return "data type " + std::to_string(onnxType);
}

namespace {

/// The constant of `tensor`, or null with `error` set.
ElementsAttr convertTensor(MLIRContext &context, onnx::TensorProto &tensor,
                           llvm::StringRef modelDir, std::string &error) {
  Type element = elementTypeOf(context, tensor.data_type());
  if (!element) {
    error = describe(tensor) + " has element type " + onnxTypeName(tensor.data_type()) +
            ", which kiln does not support";
    return nullptr;
  }
  llvm::SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  std::optional<int64_t> count = elementCount(shape);
  // ONNX stores booleans as one byte each.
  int64_t width = element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  int64_t expected;
  if (!count || llvm::MulOverflow(*count, width, expected)) {
    error = describe(tensor) + " has dims whose element count is negative or "
                               "overflows 64 bits";
    return nullptr;
  }
  auto type = RankedTensorType::get(shape, element);

  TensorBytes data;
  std::vector<char> typed;
  std::unique_ptr<llvm::MemoryBuffer> external;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    external = readExternal(tensor, modelDir, expected, error);
    if (!external)
      return nullptr;
    data.bytes = {external->getBufferStart(), external->getBufferSize()};
  } else if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != uint64_t(expected)) {
      error = describe(tensor) + " holds " + std::to_string(tensor.raw_data().size()) +
              " bytes of data but its dims need " + std::to_string(expected);
      return nullptr;
    }
    std::string *raw = tensor.release_raw_data();
    data.bytes = {raw->data(), raw->size()};
    data.release = [raw](void *, size_t, size_t) { delete raw; };
  } else {
    bool ok;
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      ok = copyTyped<float, float>(tensor.float_data(), *count, typed, error, tensor);
      break;
    case onnx::TensorProto::DOUBLE:
      ok = copyTyped<double, double>(tensor.double_data(), *count, typed, error, tensor);
      break;
    case onnx::TensorProto::INT64:
      ok = copyTyped<int64_t, int64_t>(tensor.int64_data(), *count, typed, error, tensor);
      break;
    case onnx::TensorProto::UINT32:
      ok = copyTyped<uint64_t, uint32_t>(tensor.uint64_data(), *count, typed, error, tensor);
      break;
    case onnx::TensorProto::UINT64:
      ok = copyTyped<uint64_t, uint64_t>(tensor.uint64_data(), *count, typed, error, tensor);
      break;
    case onnx::TensorProto::INT32:
      ok = copyTyped<int32_t, int32_t>(tensor.int32_data(), *count, typed, error, tensor);
      break;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      ok = copyTyped<int32_t, int16_t>(tensor.int32_data(), *count, typed, error, tensor);
      break;
    case onnx::TensorProto::UINT16:
      ok = copyTyped<int32_t, uint16_t>(tensor.int32_data(), *count, typed, error, tensor);
      break;
    default: // one byte per element: int8, uint8, bool, float8
      ok = copyTyped<int32_t, int8_t>(tensor.int32_data(), *count, typed, error, tensor);
      break;
    }
    if (!ok)
      return nullptr;
    data.bytes = typed;
  }

  if (element.isInteger(1)) {
    llvm::SmallVector<bool> values;
    for (char byte : data.bytes)
      values.push_back(byte != 0);
    if (data.release)
      data.release(nullptr, 0, 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  if (data.bytes.size() <= kInlineBytes) {
    auto attr = DenseElementsAttr::getFromRawBuffer(type, data.bytes);
    if (data.release)
      data.release(nullptr, 0, 0);
    return attr;
  }

  // Large tensors keep their buffer. One that is not aligned for its element
  // type, or that only lives as long as this call, is copied once.
  bool aligned = reinterpret_cast<uintptr_t>(data.bytes.data()) % width == 0;
  AsmResourceBlob blob;
  if (external && aligned) {
    llvm::MemoryBuffer *owner = external.release();
    blob = AsmResourceBlob(
        data.bytes, width, [owner](void *, size_t, size_t) { delete owner; },
        /*dataIsMutable=*/false);
  } else if (data.release && aligned) {
    blob = AsmResourceBlob(data.bytes, width, std::move(data.release),
                           /*dataIsMutable=*/false);
  } else {
    blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(data.bytes, width);
    if (data.release)
      data.release(nullptr, 0, 0);
  }
  return DenseResourceElementsAttr::get(type, tensor.name().empty() ? "constant" : tensor.name(),
                                        std::move(blob));
}

} // namespace

llvm::Expected<ElementsAttr> tensorToAttr(MLIRContext &context, onnx::TensorProto &tensor,
                                          llvm::StringRef modelDir) {
  std::string error;
  if (ElementsAttr value = convertTensor(context, tensor, modelDir, error))
    return value;
  return llvm::createStringError(error);
}

} // namespace kiln
