// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ListLaunches.cpp - how the runtime launches each GPU kernel --------===//

#include "codegen/gpu/Passes.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {

#define GEN_PASS_DEF_LISTLAUNCHES
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

/// A launch argument that is a buffer: the argument of @main it views and
/// the byte offset of the view's aligned pointer there.
FailureOr<DictionaryAttr> describeBuffer(Value value, func::FuncOp main, OpBuilder &b,
                                         Operation *launch) {
  auto type = cast<MemRefType>(value.getType());
  int64_t elementOffset;
  SmallVector<int64_t> strides;
  if (!type.hasStaticShape() || failed(type.getStridesAndOffset(strides, elementOffset)) ||
      ShapedType::isDynamic(elementOffset) || llvm::any_of(strides, ShapedType::isDynamic))
    return launch->emitError("a GPU kernel reads a buffer of type ")
           << type << ", whose shape or layout is not static";
  // Views keep the aligned pointer, except memref.view, which moves it.
  int64_t byteOffset = 0;
  Value root = value;
  while (Operation *definition = root.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(definition)) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      if (!shift)
        return launch->emitError("a GPU kernel reads a view at a byte offset that is not constant");
      byteOffset += *shift;
      root = view.getSource();
    } else if (auto viewLike = dyn_cast<ViewLikeOpInterface>(definition)) {
      root = viewLike.getViewSource();
    } else {
      return launch->emitError("a GPU kernel reads a buffer made by '")
             << definition->getName() << "', which is not a view of the model's memory";
    }
  }
  auto argument = dyn_cast<BlockArgument>(root);
  if (!argument || argument.getOwner() != &main.front())
    return launch->emitError("a GPU kernel reads a buffer that is not the model's memory");
  DictionaryAttr attrs = main.getArgAttrDict(argument.getArgNumber());
  StringRef base = "input";
  int64_t index = argument.getArgNumber();
  if (attrs && attrs.get("kiln.arena")) {
    base = "arena";
    index = 0;
  } else if (attrs && attrs.get("kiln.weights")) {
    base = "weights";
    index = 0;
  } else if (auto output = attrs ? attrs.getAs<IntegerAttr>("kiln.output") : IntegerAttr()) {
    base = "output";
    index = output.getInt();
  }
  return b.getDictionaryAttr({
      b.getNamedAttr("base", b.getStringAttr(base)),
      b.getNamedAttr("index", b.getI64IntegerAttr(index)),
      b.getNamedAttr("byte_offset", b.getI64IntegerAttr(byteOffset)),
      b.getNamedAttr("offset", b.getI64IntegerAttr(elementOffset)),
      b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(type.getShape())),
      b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides)),
  });
}

/// A launch argument that is the address of a tensor map: its buffer, and
/// the map the runtime encodes over it (strides in bytes).
FailureOr<DictionaryAttr> describeTensorMap(TensorMapOp map, func::FuncOp main, OpBuilder &b,
                                            Operation *launch) {
  FailureOr<DictionaryAttr> buffer = describeBuffer(map.getBuffer(), main, b, launch);
  if (failed(buffer))
    return failure();
  int64_t elementBytes = map.getBuffer().getType().getElementTypeBitWidth() / 8;
  SmallVector<int64_t> strides;
  for (int64_t stride : map.getStrides())
    strides.push_back(stride * elementBytes);
  NamedAttrList entry(*buffer);
  entry.set("tensor_map", b.getDictionaryAttr({
                              b.getNamedAttr("dims", map.getDimsAttr()),
                              b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides)),
                              b.getNamedAttr("box", map.getBoxAttr()),
                              b.getNamedAttr("swizzle", map.getSwizzleAttr()),
                          }));
  return entry.getDictionary(b.getContext());
}

/// A launch argument that is a constant scalar, as the bits the kernel
/// parameter holds (index is 64 bits wide in kernels).
FailureOr<DictionaryAttr> describeScalar(Value value, OpBuilder &b, Operation *launch) {
  Attribute constant;
  if (!matchPattern(value, m_Constant(&constant)))
    return launch->emitError("a GPU kernel takes a scalar that is not a constant");
  int64_t width = 0;
  uint64_t bits = 0;
  if (auto integer = dyn_cast<IntegerAttr>(constant)) {
    Type type = integer.getType();
    width = type.isIndex() ? 8 : llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
    bits = integer.getValue().getZExtValue();
    if (type.isIndex() || width == 8)
      bits = uint64_t(integer.getValue().getSExtValue());
  } else if (auto real = dyn_cast<FloatAttr>(constant)) {
    width = llvm::divideCeil(real.getType().getIntOrFloatBitWidth(), 8);
    bits = real.getValue().bitcastToAPInt().getZExtValue();
  }
  if (width != 1 && width != 2 && width != 4 && width != 8)
    return launch->emitError("a GPU kernel takes a scalar of type ")
           << value.getType() << ", which the runtime cannot pass";
  return b.getDictionaryAttr({
      b.getNamedAttr("width", b.getI64IntegerAttr(width)),
      b.getNamedAttr("bits", b.getI64IntegerAttr(int64_t(bits))),
  });
}

FailureOr<DenseI64ArrayAttr> constantSizes(gpu::KernelDim3 dims, OpBuilder &b, Operation *launch,
                                           StringRef what) {
  SmallVector<int64_t> sizes;
  for (Value dim : {dims.x, dims.y, dims.z}) {
    std::optional<int64_t> size = getConstantIntValue(dim);
    if (!size || *size < 1 || *size > std::numeric_limits<int32_t>::max())
      return launch->emitError("a GPU kernel's ") << what << " size is not a positive constant";
    sizes.push_back(*size);
  }
  return b.getDenseI64ArrayAttr(sizes);
}

struct ListLaunches : impl::ListLaunchesBase<ListLaunches> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    auto kernels = module->getAttrOfType<ArrayAttr>(kKernelsAttr);
    if (!main || main.isExternal() || !kernels) {
      module.emitError("expected a planned @main and its kernels (kiln-list-kernels)");
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    SmallVector<Attribute> launches;
    for (Operation &op : main.front()) {
      if (isa<arith::ConstantOp, func::ReturnOp, ViewLikeOpInterface, TensorMapOp>(op))
        continue;
      auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      if (!launch) {
        op.emitError("'")
            << op.getName()
            << "' would run on the host between GPU kernels, which GPU plans cannot do";
        return signalPassFailure();
      }
      FailureOr<DenseI64ArrayAttr> grid =
          constantSizes(launch.getGridSizeOperandValues(), b, launch, "grid");
      FailureOr<DenseI64ArrayAttr> block =
          constantSizes(launch.getBlockSizeOperandValues(), b, launch, "block");
      if (failed(grid) || failed(block))
        return signalPassFailure();
      int64_t shared = 0;
      if (Value dynamic = launch.getDynamicSharedMemorySize()) {
        std::optional<int64_t> bytes = getConstantIntValue(dynamic);
        if (!bytes) {
          launch.emitError("a GPU kernel's shared memory size is not constant");
          return signalPassFailure();
        }
        shared = *bytes;
      }
      SmallVector<Attribute> args;
      for (Value operand : launch.getKernelOperands()) {
        auto map = operand.getDefiningOp<TensorMapOp>();
        FailureOr<DictionaryAttr> arg = map ? describeTensorMap(map, main, b, launch)
                                        : isa<MemRefType>(operand.getType())
                                            ? describeBuffer(operand, main, b, launch)
                                            : describeScalar(operand, b, launch);
        if (failed(arg))
          return signalPassFailure();
        args.push_back(*arg);
      }
      launches.push_back(b.getDictionaryAttr({
          b.getNamedAttr("kernel", launch.getKernelName()),
          b.getNamedAttr("grid", *grid),
          b.getNamedAttr("block", *block),
          b.getNamedAttr("shared", b.getI64IntegerAttr(shared)),
          b.getNamedAttr("args", b.getArrayAttr(args)),
      }));
    }
    // Each kernel of the plan is one launch.
    if (launches.size() != kernels.size()) {
      module.emitError("internal error: the plan lists ")
          << kernels.size() << " kernels but @main launches " << launches.size();
      return signalPassFailure();
    }
    SmallVector<Attribute> entries;
    for (auto [kernel, launch] : llvm::zip(kernels, launches)) {
      NamedAttrList entry(cast<DictionaryAttr>(kernel));
      entry.set("launch", launch);
      entries.push_back(entry.getDictionary(&getContext()));
    }
    module->setAttr(kKernelsAttr, b.getArrayAttr(entries));
  }
};

} // namespace
} // namespace kiln
