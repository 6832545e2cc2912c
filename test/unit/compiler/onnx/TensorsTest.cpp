// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// TensorProto to MLIR attributes: data checks, storage choice, external data.

#include "compiler/onnx/Tensors.h"
#include "compiler/onnx/Importer.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

namespace {

/// tensorToAttr's constant, or null with `error` set to why not.
mlir::ElementsAttr convert(mlir::MLIRContext &context, onnx::TensorProto &tensor,
                           llvm::StringRef modelDir, std::string &error) {
  llvm::Expected<mlir::ElementsAttr> attr = kiln::tensorToAttr(context, tensor, modelDir);
  if (attr)
    return *attr;
  error = llvm::toString(attr.takeError());
  return nullptr;
}

/// parseInputShape's message: empty when the spec is good.
std::string shapeError(llvm::StringRef spec, kiln::ImportOptions &options) {
  return llvm::toString(kiln::parseInputShape(spec, options));
}

onnx::TensorProto floatTensor(std::vector<int64_t> dims, size_t count) {
  onnx::TensorProto tensor;
  tensor.set_name("w");
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims)
    tensor.add_dims(dim);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = float(i);
  tensor.set_raw_data(
      std::string(reinterpret_cast<const char *>(values.data()), count * sizeof(float)));
  return tensor;
}

/// A temporary folder with a model folder inside it, removed at the end.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-unit", path)); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string write(llvm::StringRef name, llvm::StringRef data) {
    llvm::SmallString<128> file(path);
    llvm::sys::path::append(file, name);
    std::error_code ec;
    llvm::raw_fd_ostream out(file, ec);
    REQUIRE_FALSE(ec);
    out << data;
    return std::string(file);
  }
};

} // namespace

TEST_CASE("small tensors are inline, large ones are resources", "[tensors]") {
  mlir::MLIRContext context;
  std::string error;

  onnx::TensorProto small = floatTensor({2, 2}, 4);
  auto inlineAttr = convert(context, small, ".", error);
  REQUIRE(inlineAttr);
  auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(inlineAttr);
  REQUIRE(dense);
  CHECK(dense.getValues<float>()[3] == 3.0f);

  onnx::TensorProto large = floatTensor({64, 64}, 64 * 64);
  auto resourceAttr = convert(context, large, ".", error);
  REQUIRE(resourceAttr);
  auto resource = mlir::dyn_cast<mlir::DenseResourceElementsAttr>(resourceAttr);
  REQUIRE(resource);
  // The buffer was moved out of the proto, not copied.
  CHECK_FALSE(large.has_raw_data());
  auto blob = resource.getRawHandle().getBlob();
  REQUIRE(blob);
  float last;
  std::memcpy(&last, blob->getData().data() + (64 * 64 - 1) * sizeof(float), sizeof(float));
  CHECK(last == float(64 * 64 - 1));
}

TEST_CASE("data that does not match the dims is rejected", "[tensors]") {
  mlir::MLIRContext context;
  std::string error;

  onnx::TensorProto shortRaw = floatTensor({4, 4}, 10);
  CHECK_FALSE(convert(context, shortRaw, ".", error));
  CHECK(error == "tensor 'w' holds 40 bytes of data but its dims need 64");

  onnx::TensorProto typed;
  typed.set_name("t");
  typed.set_data_type(onnx::TensorProto::INT64);
  typed.add_dims(3);
  typed.add_int64_data(1);
  CHECK_FALSE(convert(context, typed, ".", error));
  CHECK(error == "tensor 't' holds 1 values but its dims need 3");

  onnx::TensorProto negative = floatTensor({-1}, 0);
  CHECK_FALSE(convert(context, negative, ".", error));
  CHECK(error.find("negative or overflows") != std::string::npos);

  onnx::TensorProto strings;
  strings.set_name("s");
  strings.set_data_type(onnx::TensorProto::STRING);
  CHECK_FALSE(convert(context, strings, ".", error));
  CHECK(error == "tensor 's' has element type STRING, which kiln does not support");
}

TEST_CASE("booleans and typed fields convert", "[tensors]") {
  mlir::MLIRContext context;
  std::string error;
  onnx::TensorProto flags;
  flags.set_name("b");
  flags.set_data_type(onnx::TensorProto::BOOL);
  flags.add_dims(3);
  for (int v : {1, 0, 1})
    flags.add_int32_data(v);
  auto attr = mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(convert(context, flags, ".", error));
  REQUIRE(attr);
  auto values = llvm::to_vector(attr.getValues<bool>());
  CHECK(values == llvm::SmallVector<bool>{true, false, true});
}

TEST_CASE("external data is read only from inside the model's folder", "[tensors]") {
  mlir::MLIRContext context;
  TempDir dir;
  std::string bytes(16, '\0');
  float values[4] = {1, 2, 3, 4};
  std::memcpy(bytes.data(), values, sizeof(values));
  dir.write("weights.bin", bytes);

  auto external = [](const std::string &location, const std::string &offset,
                     const std::string &length) {
    onnx::TensorProto tensor;
    tensor.set_name("w");
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_dims(4);
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *key, const std::string &value) {
      if (value.empty())
        return;
      auto *entry = tensor.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", location);
    add("offset", offset);
    add("length", length);
    return tensor;
  };

  std::string error;
  onnx::TensorProto ok = external("weights.bin", "0", "16");
  auto attr =
      mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(convert(context, ok, dir.path, error));
  REQUIRE(attr);
  CHECK(attr.getValues<float>()[2] == 3.0f);

  onnx::TensorProto noLength = external("weights.bin", "", "");
  CHECK(convert(context, noLength, dir.path, error));

  onnx::TensorProto up = external("sub/../../weights.bin", "0", "16");
  CHECK_FALSE(convert(context, up, dir.path, error));
  CHECK(error.find("leaves the model's folder") != std::string::npos);

  onnx::TensorProto past = external("weights.bin", "4", "16");
  CHECK_FALSE(convert(context, past, dir.path, error));
  CHECK(error.find("runs past the end") != std::string::npos);

  onnx::TensorProto huge = external("weights.bin", "18446744073709551615", "16");
  CHECK_FALSE(convert(context, huge, dir.path, error));
  CHECK(error.find("runs past the end") != std::string::npos);

  onnx::TensorProto garbage = external("weights.bin", "-4", "16");
  CHECK_FALSE(convert(context, garbage, dir.path, error));
  CHECK(error == "tensor 'w' has an invalid external data offset '-4'");

  onnx::TensorProto missing = external("nothing.bin", "0", "16");
  CHECK_FALSE(convert(context, missing, dir.path, error));
  CHECK(error.find("cannot open external data file") != std::string::npos);
}

namespace {

/// Fixed sizes as --input-shape ranges.
std::vector<kiln::DimRange> sizes(std::initializer_list<int64_t> shape) {
  std::vector<kiln::DimRange> ranges;
  for (int64_t size : shape)
    ranges.push_back({size, size, size});
  return ranges;
}

} // namespace

TEST_CASE("--input-shape specs parse", "[importer]") {
  kiln::ImportOptions options;
  CHECK(shapeError("input=1x3x224x224", options).empty());
  CHECK(options.inputShapes["input"] == sizes({1, 3, 224, 224}));
  CHECK(shapeError("ids=128", options).empty());
  CHECK(options.inputShapes["ids"] == sizes({128}));
  CHECK(shapeError("scale=scalar", options).empty());
  CHECK(options.inputShapes["scale"].empty());
  // Names may contain '=' only before the last one.
  CHECK(shapeError("a=b=2x2", options).empty());
  CHECK(options.inputShapes["a=b"] == sizes({2, 2}));

  CHECK(shapeError("input", options) == "--input-shape wants NAME=D0xD1x..., got 'input'");
  CHECK(shapeError("=1x2", options) == "--input-shape wants NAME=D0xD1x..., got '=1x2'");
  CHECK(shapeError("x=1x-2", options) ==
        "--input-shape: '-2' in 'x=1x-2' is not a non-negative dimension or range");
  CHECK(shapeError("x=1xx2", options) ==
        "--input-shape: '' in 'x=1xx2' is not a non-negative dimension or range");
}

TEST_CASE("--input-shape ranges and tuning points parse", "[importer]") {
  kiln::ImportOptions options;
  CHECK(shapeError("ids=1..8x1..512", options).empty());
  CHECK(options.inputShapes["ids"] == std::vector<kiln::DimRange>{{1, 8, 1}, {1, 512, 1}});
  CHECK(shapeError("ids=1..8x1..512@1x128", options).empty());
  CHECK(options.inputShapes["ids"] == std::vector<kiln::DimRange>{{1, 8, 1}, {1, 512, 128}});
  CHECK(shapeError("image=1x3x224..448x224..448@1x3x224x320", options).empty());
  CHECK(options.inputShapes["image"] ==
        std::vector<kiln::DimRange>{{1, 1, 1}, {3, 3, 3}, {224, 448, 224}, {224, 448, 320}});

  CHECK(shapeError("ids=8..1", options) ==
        "--input-shape: '8..1' in 'ids=8..1' is not a range MIN..MAX with MIN <= MAX");
  CHECK(shapeError("ids=1..8@9", options) ==
        "--input-shape: '9' in 'ids=1..8@9' is not a size within its dimension's range");
  CHECK(shapeError("ids=1..8x4@2", options) ==
        "--input-shape: 'ids=1..8x4@2' gives 1 sizes after @ for 2 dimensions");
}
