// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MatrixCoreProducts.cpp - products as MFMA kernels ------------------===//
//
// Each product that reads fp32, tf32, fp16, bf16 or the chip's 8-bit format
// becomes a gpu.launch whose wavefronts multiply on AMD's matrix cores (see
// Passes.td for the kernel's shape, MatrixCoreKernel.cpp for its body). The launch takes in the
// kernels around the product as NVIDIA's tensor-core launches do
// (codegen/gpu/ProductFusion.h): this runs on buffers before memory is
// planned, so that the buffers those kernels wrote take no memory.
//
//===----------------------------------------------------------------------===//

#include "codegen/amdgpu/MatrixCoreKernel.h"
#include "codegen/amdgpu/Passes.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {

#define GEN_PASS_DEF_MATRIXCOREPRODUCTS
#include "codegen/amdgpu/Passes.h.inc"

namespace {

using namespace mlir;
using namespace amdgpu;

struct MatrixCoreProducts : impl::MatrixCoreProductsBase<MatrixCoreProducts> {
  using MatrixCoreProductsBase::MatrixCoreProductsBase;

  void runOnOperation() override {
    std::optional<Precision> chipFP8 = parsePrecision(fp8);
    std::vector<std::pair<Product, Format>> products;
    for (auto op : getOperation().getOps<linalg::GenericOp>()) {
      auto name = op->getAttrOfType<StringAttr>(kPrecisionAttr);
      std::optional<Precision> precision =
          name ? parsePrecision(name.getValue()) : std::optional<Precision>(Precision::FP32);
      std::optional<Format> format =
          precision ? formatFor(&getContext(), *precision, xf32, chipFP8) : std::nullopt;
      if (!format)
        continue;
      if (std::optional<Product> product = matchProduct(op))
        products.push_back({*product, *format});
    }
    for (auto &[product, format] : products) {
      int64_t tile = productTile(product, kLargeTile, kSmallTile, kFewBlocks);
      Fusion fusion = fuse(product);
      Location loc = fusedLocation(product, fusion);
      OpBuilder b(fusion.anchor);
      sizeLoops(b, loc, product);
      auto launch = createProductLaunch(b, loc, product, tile, kThreads);
      b.setInsertionPointToStart(&launch.getBody().front());
      KernelBuilder(b, loc, product, format, fusion, tile).build(launch);
      eraseFused(product, fusion);
    }
  }
};

} // namespace
} // namespace kiln
