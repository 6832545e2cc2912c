// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ListKernels.cpp - the execution plan, for the artifact's manifest --===//

#include "codegen/common/Passes.h"
#include "codegen/common/SizeBounds.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringExtras.h"

namespace kiln {

#define GEN_PASS_DEF_LISTKERNELS
#include "codegen/common/Passes.h.inc"

namespace {

using namespace mlir;

/// What a kernel that no product format was chosen for computes in: the
/// element type it writes (fp16 for a model stored in f16, i64 for index
/// arithmetic).
std::string formatOf(Type element) {
  if (element.isF16() || element.isF32() || element.isF64())
    return "fp" + std::to_string(element.getIntOrFloatBitWidth());
  if (element.isBF16())
    return "bf16";
  if (isa<Float8E4M3FNType>(element))
    return "fp8";
  if (element.isInteger(1))
    return "bool";
  if (element.isInteger())
    return "i" + std::to_string(element.getIntOrFloatBitWidth());
  std::string name;
  llvm::raw_string_ostream(name) << element;
  return name;
}

/// What a kernel computes, in a word.
StringRef kindOf(linalg::LinalgOp op) {
  if (isa<linalg::FillOp>(op))
    return "fill";
  if (isa<linalg::CopyOp>(op))
    return "copy";
  if (isa<linalg::BroadcastOp>(op))
    return "broadcast";
  if (isa<linalg::TransposeOp>(op))
    return "transpose";
  if (auto map = dyn_cast<linalg::MapOp>(op.getOperation()))
    return map.getInputs().empty() ? "fill" : "elementwise";
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return op->getName().stripDialect();
  Block &body = generic.getRegion().front();
  bool reduces = generic.getNumReductionLoops() > 0;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (reduces && generic.getNumDpsInputs() == 2 && body.getOperations().size() == 3 &&
      isa<arith::MulFOp, arith::MulIOp>(body.front()) &&
      isa<arith::AddFOp, arith::AddIOp>(*std::next(body.begin())))
    return "matmul";
  if (reduces)
    return "reduce";
  // A loop in the body runs, for each output, over a window (pooling, or a
  // depthwise convolution when it multiplies) or over a row for its
  // statistics (several results: Softmax, LayerNorm).
  if (!body.getOps<scf::ForOp>().empty()) {
    if (generic.getNumDpsInits() > 1)
      return "reduce";
    bool multiplies = false;
    for (scf::ForOp loop : body.getOps<scf::ForOp>())
      loop.walk([&](arith::MulFOp) { multiplies = true; });
    return multiplies ? "depthwise" : "pool";
  }
  // A body that reads at indices it computes gathers (im2col columns).
  if (generic.getNumDpsInputs() == 0 && !body.getOps<memref::LoadOp>().empty())
    return "gather";
  // A body that only forwards its input moves data: a plain copy when the
  // maps are the same, else a gather (im2col windows, slices, transposes).
  if (generic.getNumDpsInputs() == 1 && yield.getValues().size() == 1 &&
      yield.getValues()[0] == body.getArgument(0)) {
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    return maps[0] == maps[1] ? "copy" : "gather";
  }
  return "elementwise";
}

/// The buffer a fused kernel (a loop nest on the host, a launch on GPUs)
/// stores its result in: the last one it writes that it does not allocate
/// itself.
Value storedBuffer(Operation *kernel) {
  Value result;
  kernel->walk([&](Operation *op) {
    Value base;
    if (auto store = dyn_cast<vector::StoreOp>(op))
      base = store.getBase();
    else if (auto masked = dyn_cast<vector::MaskedStoreOp>(op))
      base = masked.getBase();
    else if (auto scalar = dyn_cast<memref::StoreOp>(op))
      base = scalar.getMemRef();
    else if (auto nested = dyn_cast<linalg::LinalgOp>(op); nested && nested.getNumDpsInits() > 0)
      base = nested.getDpsInits()[0];
    while (base && base.getDefiningOp<ViewLikeOpInterface>() &&
           kernel->isProperAncestor(base.getDefiningOp()))
      base = base.getDefiningOp<ViewLikeOpInterface>().getViewSource();
    if (base && !kernel->isAncestor(base.getParentRegion()->getParentOp()))
      result = base;
  });
  return result;
}

/// The planned buffer `value` is part of: a memref.view of the arena or
/// the weights, or an argument, through reshapes and slices.
Value bufferOf(Value value) {
  while (Operation *definition = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(definition);
    if (!view || isa<memref::ViewOp>(definition))
      break;
    value = view.getViewSource();
  }
  return value;
}

/// The buffers defined outside `kernel` that it reads.
SmallVector<Value> readBuffers(Operation *kernel) {
  SmallVector<Value> reads;
  auto add = [&](Value value) {
    Value buffer = bufferOf(value);
    Operation *owner = buffer.getParentBlock()->getParentOp();
    if (!kernel->isAncestor(owner) && !llvm::is_contained(reads, buffer))
      reads.push_back(buffer);
  };
  kernel->walk([&](Operation *op) {
    // A linalg op (the kernel, or one in it) reads its inputs, and the
    // outputs it accumulates into.
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      for (OpOperand &operand : op->getOpOperands())
        if (isa<MemRefType>(operand.get().getType()) &&
            (linalgOp.isDpsInput(&operand) || linalgOp.payloadUsesValueFromOperand(&operand)))
          add(operand.get());
    if (auto load = dyn_cast<memref::LoadOp>(op))
      add(load.getMemRef());
    else if (auto load = dyn_cast<vector::LoadOp>(op))
      add(load.getBase());
    else if (auto masked = dyn_cast<vector::MaskedLoadOp>(op))
      add(masked.getBase());
    else if (auto gather = dyn_cast<vector::GatherOp>(op))
      add(gather.getBase());
  });
  return reads;
}

} // namespace

/// The most bytes `buffer` holds in any run: its size, or for a view of
/// symbolic sizes its size at their largest (SizeBounds.h); a collapsed
/// one holds its source's.
std::optional<int64_t> largestBytes(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Operation *definition = buffer.getDefiningOp();
  if (type.hasStaticShape())
    return kiln::largestBytes(type, ValueRange{});
  if (auto view = dyn_cast_or_null<memref::ViewOp>(definition))
    return kiln::largestBytes(type, view.getSizes());
  if (auto subview = dyn_cast_or_null<memref::SubViewOp>(definition))
    return kiln::largestBytes(type, subview.getSizes());
  if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(definition))
    return kiln::largestBytes(type, expand.getOutputShape());
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(definition))
    return largestBytes(collapse.getSrc());
  return std::nullopt;
}

int64_t contractionFlops(linalg::LinalgOp op) {
  int64_t flops = 2;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return 0;
    flops *= range;
  }
  return flops;
}

Value kernelResult(Operation &op) {
  if (op.hasAttr(kKernelAttr))
    return storedBuffer(&op);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op); linalgOp && linalgOp.getNumDpsInits() >= 1)
    return linalgOp.getDpsInits()[0];
  return {};
}

namespace {

/// Two for each multiply-add of a depthwise convolution's window kernel:
/// its outputs times the trips of the loops around the multiplication; 0
/// when one is not static.
int64_t windowFlops(linalg::LinalgOp op) {
  int64_t flops = contractionFlops(op);
  // The product the window loops accumulate (an activation fused after
  // the window may multiply too, outside the loops).
  Operation *multiply = nullptr;
  op->walk([&](arith::MulFOp mul) {
    auto loop = mul->getParentOfType<scf::ForOp>();
    if (!multiply && loop && op->isProperAncestor(loop))
      multiply = mul;
  });
  for (Operation *at = multiply; at && at != op; at = at->getParentOp())
    if (auto loop = dyn_cast<scf::ForOp>(at)) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (!trips)
        return 0;
      flops *= int64_t(trips->getZExtValue());
    }
  return flops;
}

struct ListKernels : impl::ListKernelsBase<ListKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    OpBuilder b(&getContext());
    SmallVector<Attribute> kernels;
    // The kernel that last wrote each buffer, to find what each one reads.
    llvm::DenseMap<Value, int64_t> writer;
    for (Operation &op : main.getBody().front()) {
      Value result = kernelResult(op);
      if (!result)
        continue;
      StringRef kind;
      int64_t flops = 0;
      SmallVector<Value> written;
      if (auto fused = op.getAttrOfType<StringAttr>(kKernelAttr)) {
        kind = fused.getValue();
        if (auto count = op.getAttrOfType<IntegerAttr>(kFlopsAttr))
          flops = count.getInt();
        written.push_back(result);
      } else {
        auto linalgOp = cast<linalg::LinalgOp>(op);
        kind = kindOf(linalgOp);
        if (kind == "matmul")
          flops = contractionFlops(linalgOp);
        else if (kind == "depthwise")
          flops = windowFlops(linalgOp);
        written.append(linalgOp.getDpsInits().begin(), linalgOp.getDpsInits().end());
      }
      // A result of symbolic size is listed at its largest, and so is its
      // offset, which a run computes from its sizes.
      auto type = cast<MemRefType>(result.getType());
      int64_t bytes = largestBytes(result).value_or(0);

      // Where the result goes: an output of the model, or a place in the
      // activation arena (a view of it, maybe through reshapes and slices).
      std::string buffer = "?";
      int64_t offset = 0;
      Value root = result;
      while (Operation *definition = root.getDefiningOp()) {
        if (auto view = dyn_cast<memref::ViewOp>(definition)) {
          if (std::optional<std::pair<int64_t, int64_t>> at = sizeBounds(view.getByteShift()))
            offset = at->second;
          root = view.getSource();
        } else if (auto viewLike = dyn_cast<ViewLikeOpInterface>(definition)) {
          root = viewLike.getViewSource();
        } else {
          break;
        }
      }
      if (auto argument = dyn_cast<BlockArgument>(root)) {
        DictionaryAttr attrs = main.getArgAttrDict(argument.getArgNumber());
        if (attrs && attrs.get("kiln.arena"))
          buffer = "arena";
        else if (auto name = attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr())
          buffer = name.str();
      }
      SmallVector<int64_t> after;
      SmallVector<Attribute> inputs;
      for (Value read : readBuffers(&op)) {
        if (auto found = writer.find(read); found != writer.end()) {
          if (!llvm::is_contained(after, found->second))
            after.push_back(found->second);
        } else if (auto argument = dyn_cast<BlockArgument>(read)) {
          if (auto name = main.getArgAttrOfType<StringAttr>(argument.getArgNumber(), "kiln.name"))
            inputs.push_back(name);
        }
      }
      llvm::sort(after);
      for (Value buffer : written)
        writer[bufferOf(buffer)] = int64_t(kernels.size());
      // The format a product reads, or that a rounding kernel rounds to.
      auto precision = op.getAttrOfType<StringAttr>(kPrecisionAttr);
      // The layout of a convolution's or pooling's activations.
      auto layout = op.getAttrOfType<StringAttr>(kLayoutAttr);
      NamedAttrList entry({
          b.getNamedAttr("kind", b.getStringAttr(kind)),
          b.getNamedAttr("precision",
                         precision ? precision : b.getStringAttr(formatOf(type.getElementType()))),
          b.getNamedAttr("layout", layout ? layout : b.getStringAttr("")),
          b.getNamedAttr("after", b.getDenseI64ArrayAttr(after)),
          b.getNamedAttr("inputs", b.getArrayAttr(inputs)),
          b.getNamedAttr("node", b.getStringAttr(llvm::join(onnxNodes(op.getLoc()), ", "))),
          b.getNamedAttr("buffer", b.getStringAttr(buffer)),
          b.getNamedAttr("offset", b.getI64IntegerAttr(offset)),
          b.getNamedAttr("bytes", b.getI64IntegerAttr(bytes)),
          b.getNamedAttr("flops", b.getI64IntegerAttr(flops)),
      });
      if (op.hasAttr(kSizesOnlyAttr))
        entry.set(kSizesOnlyKey, b.getBoolAttr(true));
      kernels.push_back(entry.getDictionary(&getContext()));
    }
    module->setAttr(kKernelsAttr, b.getArrayAttr(kernels));
  }
};

} // namespace
} // namespace kiln
