// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ProductKernel.cpp - what every matrix-unit kernel builder does -----===//

#include "codegen/gpu/ProductKernel.h"
#include "dialects/kiln/KilnDialect.h"

#include "codegen/common/Passes.h"
#include "dialects/kiln/Precision.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::products {

namespace {

/// The ops a launch replaces: the product, its epilogue, its writers.
SmallVector<Operation *> joinedOps(const Product &product, const Fusion &fusion) {
  SmallVector<Operation *> joined = {product.op};
  if (fusion.epilogue)
    joined.push_back(fusion.epilogue);
  for (auto [alloc, writer] : fusion.writers)
    joined.push_back(writer);
  return joined;
}

} // namespace

int64_t productTile(const Product &product, int64_t large, int64_t small, int64_t fewBlocks) {
  if (ShapedType::isDynamic(product.numRows) || ShapedType::isDynamic(product.numBatch))
    return large;
  int64_t blocks = llvm::divideCeil(product.numRows, large) *
                   llvm::divideCeil(product.numCols, large) * product.numBatch;
  return blocks >= fewBlocks ? large : small;
}

Location fusedLocation(const Product &product, const Fusion &fusion) {
  SmallVector<Location> locations;
  for (Operation *op : joinedOps(product, fusion))
    locations.push_back(op->getLoc());
  return FusedLoc::get(product.op->getContext(), locations);
}

gpu::LaunchOp createProductLaunch(OpBuilder &b, Location loc, const Product &product, int64_t tile,
                                  int64_t threads) {
  auto size = [&](int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); };
  auto blocks = [&](OpFoldResult count) -> Value {
    if (std::optional<int64_t> known = getConstantIntValue(count))
      return size(llvm::divideCeil(*known, tile));
    return arith::CeilDivUIOp::create(b, loc, cast<Value>(count), size(tile));
  };
  Value one = size(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks(product.rowCount), size(llvm::divideCeil(product.numCols, tile)),
      getValueOrCreateConstantIndexOp(b, loc, product.batchCount), size(threads), one, one);
  launch->setAttr(kKernelAttr, b.getStringAttr("matmul"));
  launch->setAttr(kFlopsAttr, b.getI64IntegerAttr(contractionFlops(product.op)));
  for (StringRef name : {kPrecisionAttr, kLayoutAttr})
    if (Attribute value = product.op->getAttr(name))
      launch->setAttr(name, value);
  return launch;
}

void eraseFused(const Product &product, const Fusion &fusion) {
  // What the launch computes instead of reading is stored no more.
  SmallVector<Value> dead;
  if (fusion.epilogue)
    dead.push_back(rootOf(product.c));
  for (auto [alloc, writer] : fusion.writers)
    if (!llvm::is_contained(dead, alloc))
      dead.push_back(alloc);
  for (Operation *op : joinedOps(product, fusion))
    op->erase();
  for (Value buffer : dead)
    eraseIfDead(buffer);
}

Value ProductKernelBuilder::scaled(Value value, float scale) {
  if (scale == 1.0f)
    return value;
  Value factor = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(scale));
  return arith::MulFOp::create(b, loc, value, factor);
}

SmallVector<std::pair<unsigned, Value>> ProductKernelBuilder::decompose(Value flat,
                                                                        ArrayRef<unsigned> loops) {
  SmallVector<OpFoldResult> extents;
  for (unsigned loop : loops)
    extents.push_back(p.extents[loop]);
  SmallVector<std::pair<unsigned, Value>> indices;
  for (auto [loop, index] : llvm::zip(loops, delinearize(b, loc, flat, extents)))
    indices.push_back({loop, index});
  return indices;
}

ProductKernelBuilder::Position ProductKernelBuilder::position(Value flat, ArrayRef<unsigned> loops,
                                                              OpFoldResult total, int64_t back) {
  std::optional<int64_t> known = getConstantIntValue(total);
  Value count = value(total);
  Value valid = lessThan(flat, count);
  Value last = known ? constant(*known - back)
                     : arith::SubIOp::create(b, loc, count, constant(back)).getResult();
  Value clamped = arith::MinUIOp::create(b, loc, flat, last);
  return {decompose(clamped, loops), valid};
}

SmallVector<Value> ProductKernelBuilder::indicesOf(AffineMap map,
                                                   ArrayRef<std::pair<unsigned, Value>> known) {
  SmallVector<Value> indices;
  for (AffineExpr result : map.getResults()) {
    Value index = constant(0);
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      for (auto [loop, value] : known)
        if (loop == dim.getPosition())
          index = value;
    indices.push_back(index);
  }
  return indices;
}

SmallVector<Value> ProductKernelBuilder::indicesOfC(const Position &row, const Position &col) {
  SmallVector<std::pair<unsigned, Value>> known(batchIndex);
  known.append(row.dims);
  known.append(col.dims);
  return indicesOf(p.mapC, known);
}

Value ProductKernelBuilder::loadC(const Position &row, const Position &col) {
  return read(p.c, indicesOfC(row, col));
}

void ProductKernelBuilder::storeC(const Position &row, const Position &col, Value value) {
  auto inside = scf::IfOp::create(b, loc, both(row.valid, col.valid), /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inside.thenBlock());
  SmallVector<Value> at = indicesOfC(row, col);
  linalg::GenericOp epilogue = fusion.epilogue;
  if (!epilogue) {
    memref::StoreOp::create(b, loc, value, p.c, at);
    return;
  }
  SmallVector<Value> inAlloc = reshapes.toAlloc(p.c, at);
  // The epilogue reads C (each time by identity) and writes its output by
  // identity: its loop indices are C's, through each one's reshapes.
  SmallVector<Value> loops;
  llvm::DenseMap<unsigned, Value> known;
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (rootOf(input->get()) == rootOf(p.c)) {
      if (loops.empty())
        loops = reshapes.fromAlloc(input->get(), inAlloc);
      known[input->getOperandNumber()] = value;
    }
  memref::StoreOp::create(b, loc, compute(epilogue, loops, known), epilogue.getDpsInits()[0],
                          loops);
}

Value ProductKernelBuilder::read(Value buffer, ValueRange indices) {
  memref::AllocOp alloc = reshapedAlloc(buffer);
  Operation *writer = alloc ? fusion.writers.lookup(alloc.getResult()) : nullptr;
  if (!writer)
    return memref::LoadOp::create(b, loc, buffer, indices);
  if (auto fill = dyn_cast<linalg::FillOp>(writer))
    return fill.getInputs()[0];
  if (auto transpose = dyn_cast<linalg::TransposeOp>(writer)) {
    // Output dimension d is input dimension perm[d].
    SmallVector<Value> inAlloc = reshapes.toAlloc(buffer, indices);
    SmallVector<Value> at(inAlloc.size());
    for (auto [d, from] : llvm::enumerate(transpose.getPermutation()))
      at[from] = inAlloc[d];
    return read(transpose.getInput(), at);
  }
  return compute(cast<linalg::GenericOp>(writer), reshapes.toAlloc(buffer, indices),
                 llvm::DenseMap<unsigned, Value>());
}

Value ProductKernelBuilder::compute(linalg::GenericOp op, ValueRange loops,
                                    const llvm::DenseMap<unsigned, Value> &known) {
  Block &body = op.getRegion().front();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    unsigned number = input->getOperandNumber();
    BlockArgument argument = body.getArgument(number);
    if (Value value = known.lookup(number))
      mapping.map(argument, value);
    else if (!argument.use_empty())
      mapping.map(argument,
                  read(input->get(), indicesAt(b, loc, op.getMatchingIndexingMap(input), loops)));
  }
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), loops[index.getDim()]);
    } else if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      SmallVector<Value> at;
      for (Value index : load.getIndices())
        at.push_back(mapping.lookupOrDefault(index));
      mapping.map(load.getResult(), read(load.getMemRef(), at));
    } else {
      b.clone(inner, mapping);
    }
  }
  return mapping.lookupOrDefault(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}

} // namespace kiln::products
