// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- AssignPrecision.cpp - the format each product reads ----------------===//
//
// Tensor cores multiply TF32, FP16, BF16 or FP8 operands and accumulate in
// f32. Here each Conv, Gemm and MatMul is given the format it reads: its
// weights are rounded to it once, at compile time, and its activations by
// a kiln.round_to just before it. The product itself still multiplies f32
// tensors, so the host computes exactly what a GPU would (round to nearest
// even, the format's range, FP8's saturation) and `kiln run` on the host
// shows the error a low precision costs.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Precision.h"
#include "dialects/kiln/Weights.h"
#include "passes/Calibration.h"
#include "passes/Matching.h"
#include "passes/Passes.h"

#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace kiln {

#define GEN_PASS_DEF_ASSIGNPRECISION
#include "passes/Passes.h.inc"

namespace {

using namespace mlir;

/// The ONNX operator type of a product, or empty. A depthwise convolution
/// is none: each output sums one window of one channel, which no
/// tensor-core instruction suits, so it stays fp32 wherever it runs.
StringRef productType(Operation *op) {
  if (auto conv = dyn_cast<ConvOp>(op))
    return conv.isDepthwise() ? "" : "Conv";
  if (isa<GemmOp>(op))
    return "Gemm";
  if (isa<MatMulOp>(op))
    return "MatMul";
  return "";
}

/// The per-tensor scale of values whose absolute maximum is `absmax`, in
/// the 8-bit `format`.
float fp8Scale(float absmax, Precision format) {
  return absmax > 0.0f ? absmax / fp8Max(format) : 1.0f;
}

struct AssignPrecision : impl::AssignPrecisionBase<AssignPrecision> {
  using AssignPrecisionBase::AssignPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Precision> format = parsePrecision(precision);
    if (!format) {
      module.emitError("unknown precision '")
          << precision << "': expected fp32, tf32, fp16, bf16, fp8 or fp8-fnuz";
      return signalPassFailure();
    }
    llvm::StringMap<float> absmax;
    if (!calibration.empty()) {
      if (llvm::Error error = readCalibration(calibration, absmax)) {
        module.emitError(llvm::toString(std::move(error)));
        return signalPassFailure();
      }
    } else if (isFP8(*format)) {
      module.emitError(precisionName(*format) +
                       " needs the activations' scales: run kiln calibrate on sample "
                       "inputs and pass its file with --calibration");
      return signalPassFailure();
    }

    SmallVector<Operation *> products;
    llvm::StringSet<> nodeNames;
    module.walk([&](Operation *op) {
      if (!productType(op).empty())
        products.push_back(op);
      for (StringRef name : onnxNodes(op->getLoc()))
        nodeNames.insert(name);
    });
    for (const std::string &item : keepFp32) {
      bool isType = item == "Conv" || item == "Gemm" || item == "MatMul";
      bool named =
          llvm::any_of(nodeNames.keys(), [&](StringRef name) { return name.contains(item); });
      if (!isType && !named) {
        module.emitError("--keep-fp32: '")
            << item << "' is neither Conv, Gemm or MatMul (the operators that run below "
            << "fp32) nor part of any node's name";
        return signalPassFailure();
      }
    }
    if (*format == Precision::FP32)
      return;

    for (Operation *op : products) {
      // The reduced formats stand in for f32: products of f64 (or of any
      // other type) keep theirs.
      auto isF32 = [&](unsigned index) {
        return cast<RankedTensorType>(op->getOperand(index).getType()).getElementType().isF32();
      };
      if (isKept(op) || !isF32(0) || !isF32(1))
        continue;
      op->setAttr(kPrecisionAttr, StringAttr::get(&getContext(), precisionName(*format)));
      SmallVector<float> scales;
      for (unsigned operand : {0u, 1u}) {
        FailureOr<float> scale = roundOperand(op, operand, *format, absmax);
        if (failed(scale))
          return signalPassFailure();
        scales.push_back(*scale);
      }
      if (isFP8(*format))
        op->setAttr(kScalesAttr, DenseF32ArrayAttr::get(&getContext(), scales));
    }
  }

private:
  bool isKept(Operation *op) {
    SmallVector<StringRef> names = onnxNodes(op->getLoc());
    return llvm::any_of(keepFp32, [&](const std::string &item) {
      return item == productType(op) ||
             llvm::any_of(names, [&](StringRef name) { return name.contains(item); });
    });
  }

  /// Makes operand `index` of `op` hold values of `format`; returns the
  /// scale they hold them at (1 but for fp8).
  FailureOr<float> roundOperand(Operation *op, unsigned index, Precision format,
                                const llvm::StringMap<float> &absmax) {
    Value value = op->getOperand(index);
    OpBuilder b(op);
    // Weights: rounded now, with their own scale for fp8.
    if (auto constant = value.getDefiningOp<ConstantOp>()) {
      std::optional<std::vector<float>> values = readF32(constant.getValue());
      if (!values)
        return op->emitError("cannot read the constant operand ") << index << " to round it";
      float scale = 1.0f;
      if (isFP8(format)) {
        float largest = 0.0f;
        for (float v : *values)
          largest = std::fmax(largest, std::fabs(v));
        scale = fp8Scale(largest, format);
      }
      for (float &v : *values)
        v = roundTo(v / scale, format) * scale;
      std::string name = derivedName(constant.getValue(), precisionName(format));
      auto type = cast<RankedTensorType>(value.getType());
      op->setOperand(index, ConstantOp::create(b, constant.getLoc(), makeF32(type, *values, name)));
      return scale;
    }
    // Activations: rounded as they are read, with a calibrated scale for fp8.
    float scale = 1.0f;
    if (isFP8(format)) {
      auto inputs = op->getAttrOfType<ArrayAttr>("kiln.inputs");
      auto tensor =
          inputs && index < inputs.size() ? dyn_cast<StringAttr>(inputs[index]) : StringAttr();
      auto found = tensor ? absmax.find(tensor.getValue()) : absmax.end();
      if (found == absmax.end())
        return op->emitError(precisionName(format))
               << ": the calibration file '" << calibration
               << "' has no absolute maximum for input " << index
               << (tensor ? (" '" + tensor.getValue() + "'").str() : std::string())
               << "; calibrate with inputs that reach this node";
      scale = fp8Scale(found->second, format);
    }
    Value rounded =
        RoundToOp::create(b, op->getLoc(), value.getType(), value,
                          b.getStringAttr(precisionName(format)), b.getF32FloatAttr(scale));
    op->setOperand(index, rounded);
    return scale;
  }
};

} // namespace
} // namespace kiln
