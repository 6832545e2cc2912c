// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- TensorCoreInstructions.cpp - mma.sync and wgmma --------------------===//

#include "codegen/nvptx/TensorCoreKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::nvptx {

std::optional<Format> formatFor(Precision precision, bool fp8) {
  using NVVM::MMATypes, NVVM::WGMMATypes;
  switch (precision) {
  case Precision::TF32:
    return Format{precision, 8, 1, MMATypes::tf32, WGMMATypes::tf32, 32};
  case Precision::FP16:
    return Format{precision, 16, 2, MMATypes::f16, WGMMATypes::f16, 16};
  case Precision::BF16:
    return Format{precision, 16, 2, MMATypes::bf16, WGMMATypes::bf16, 16};
  case Precision::FP8:
    if (fp8)
      return Format{precision, 32, 4, MMATypes::e4m3, WGMMATypes::e4m3, 8};
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

Value KernelBuilder::mmaFP8(Type resultType, ArrayRef<Value> a, ArrayRef<Value> bFragment,
                            ValueRange c) {
  SmallVector<Value> operands(a);
  llvm::append_range(operands, bFragment);
  llvm::append_range(operands, c);
  return LLVM::InlineAsmOp::create(
             b, loc, resultType, operands,
             "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {$0, $1, $2, $3}, "
             "{$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
             "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*has_side_effects=*/false,
             /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

void KernelBuilder::multiplyWarps(Value tileA, const Staging &stageA, Value tileB,
                                  const Staging &stageB, Value buffer, Value group, Value inGroup,
                                  SmallVector<Value> &acc) {
  for (int64_t k = 0; k < kBlockK; k += f.k) {
    SmallVector<SmallVector<Value>> fragA, fragB;
    for (int64_t i = 0; i < tilesM; ++i)
      fragA.push_back(loadA(tileA, stageA, buffer, i, k, group, inGroup));
    for (int64_t j = 0; j < tilesN; ++j)
      fragB.push_back(loadB(tileB, stageB, buffer, j, k, group, inGroup));
    for (int64_t i = 0; i < tilesM; ++i)
      for (int64_t j = 0; j < tilesN; ++j) {
        int64_t at = (i * tilesN + j) * 4;
        Value d = multiply(fragA[i], fragB[j], ArrayRef(acc).slice(at, 4));
        for (int64_t r = 0; r < 4; ++r)
          acc[at + r] = LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{r});
      }
  }
}

SmallVector<Value> KernelBuilder::multiplyWarpgroup(Value tileA, const Staging &stageA, Value tileB,
                                                    const Staging &stageB, Value buffer,
                                                    ArrayRef<Value> acc) {
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(acc.size(), b.getF32Type()));
  Value d = LLVM::PoisonOp::create(b, loc, type);
  for (auto [i, value] : llvm::enumerate(acc))
    d = LLVM::InsertValueOp::create(b, loc, d, value, ArrayRef<int64_t>{int64_t(i)});
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  MLIRContext *context = b.getContext();
  auto format = NVVM::WGMMATypesAttr::get(context, f.wgmmaType);
  auto one = NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one);
  for (int64_t step = 0; step < kBlockK / f.k; ++step) {
    // Named, so that A's descriptor comes first whatever order the C++
    // compiler evaluates arguments in.
    Value descriptorA = descriptor(tileA, stageA, buffer, step);
    Value descriptorB = descriptor(tileB, stageB, buffer, step);
    d = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, type, d, descriptorA, descriptorB,
        NVVM::MMAShapeAttr::get(context, tile, tile, f.k), format, format,
        NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(context, NVVM::WGMMAScaleOut::one), one, one,
        NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::col), NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  SmallVector<Value> result;
  for (int64_t i = 0; i < int64_t(acc.size()); ++i)
    result.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i}));
  return result;
}

Value KernelBuilder::descriptor(Value tile, const Staging &s, Value buffer, int64_t step) {
  Value address;
  int64_t fields;
  if (s.tma) {
    address = add(tmaBase(tile), add(mul(buffer, tmaStageBytes()), constant(step * f.k * 4)));
    fields = int64_t(1) << 16 | (kSwizzleAtomBytes >> 4) << 32 | int64_t(1) << 62;
  } else {
    auto type = cast<MemRefType>(tile.getType());
    int64_t stageBytes = type.getNumElements() / stages * f.bits / 8;
    int64_t rowBlockBytes = type.getDimSize(2) * kCoreBytes;
    address =
        add(sharedAddress(tile), add(mul(buffer, stageBytes), constant(step * 2 * kCoreBytes)));
    fields = (kCoreBytes >> 4) << 16 | (rowBlockBytes >> 4) << 32;
  }
  Type i64 = b.getI64Type();
  auto bits = [&](int64_t value) { return arith::ConstantIntOp::create(b, loc, i64, value); };
  Value start = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, arith::IndexCastUIOp::create(b, loc, i64, address),
                            bits(0x3ffff)),
      bits(4));
  return arith::OrIOp::create(b, loc, start, bits(fields));
}

Value KernelBuilder::multiply(ArrayRef<Value> a, ArrayRef<Value> bFragment, ArrayRef<Value> acc) {
  Type f32 = b.getF32Type();
  Type resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  if (f.precision == Precision::FP8)
    return mmaFP8(resultType, a, bFragment, acc);
  return NVVM::MmaOp::create(
             b, loc, resultType, a, bFragment, acc, {16, 8, f.k}, std::nullopt, std::nullopt,
             std::array<NVVM::MMATypes, 2>{f.type, f.type},
             std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col})
      .getResult();
}

Value KernelBuilder::inFormat(Value element) {
  Type i16 = b.getI16Type();
  switch (f.precision) {
  case Precision::FP16:
    return arith::BitcastOp::create(b, loc, i16,
                                    arith::TruncFOp::create(b, loc, b.getF16Type(), element));
  case Precision::BF16: {
    // The high half of the f32 bits.
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), element);
    Value sixteen = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 16);
    return arith::TruncIOp::create(b, loc, i16, arith::ShRUIOp::create(b, loc, bits, sixteen));
  }
  default: {
    // cvt makes a pair; the low byte is the second operand's.
    Value pair = LLVM::InlineAsmOp::create(b, loc, i16, ValueRange{element, element},
                                           "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;", "=h,f,f",
                                           /*has_side_effects=*/false, /*is_align_stack=*/false,
                                           LLVM::tailcallkind::TailCallKind::None,
                                           LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
    return arith::TruncIOp::create(b, loc, b.getI8Type(), pair);
  }
  }
}

Value KernelBuilder::pack(ArrayRef<Value> elements) {
  Type i32 = b.getI32Type();
  switch (f.precision) {
  case Precision::TF32:
    return arith::BitcastOp::create(b, loc, i32, elements[0]);
  case Precision::FP8:
    // Two cvt make two E4M3 pairs (the second operand takes the low
    // byte); the first element takes the lowest byte of the register.
    return LLVM::InlineAsmOp::create(
               b, loc, i32, elements,
               "{ .reg .b16 lo, hi;\n"
               "cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1;\n"
               "cvt.rn.satfinite.e4m3x2.f32 hi, $4, $3;\n"
               "mov.b32 $0, {lo, hi}; }",
               "=r,f,f,f,f", /*has_side_effects=*/false, /*is_align_stack=*/false,
               LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  case Precision::FP16: {
    Type f16 = b.getF16Type();
    SmallVector<Value> halves;
    for (Value element : elements)
      halves.push_back(arith::TruncFOp::create(b, loc, f16, element));
    return vector::FromElementsOp::create(b, loc, VectorType::get({2}, f16), halves);
  }
  default: {
    // bf16 is the high half of the f32 bits (exactly, as the value is
    // rounded already); the first element takes the low half.
    Value low = arith::BitcastOp::create(b, loc, i32, elements[0]);
    Value high = arith::BitcastOp::create(b, loc, i32, elements[1]);
    Value sixteen = arith::ConstantIntOp::create(b, loc, i32, 16);
    Value mask = arith::ConstantIntOp::create(b, loc, i32, -65536); // 0xffff0000
    return arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, high, mask),
                                arith::ShRUIOp::create(b, loc, low, sixteen));
  }
  }
}

SmallVector<Value> KernelBuilder::loadA(Value tile, const Staging &s, Value buffer, int64_t i,
                                        int64_t k, Value g, Value t) {
  SmallVector<Value> registers;
  for (int64_t r = 0; r < 4; ++r) {
    Value row = add(warpRow, add(g, constant(16 * i + 8 * (r % 2))));
    registers.push_back(fragment(tile, s, buffer, row, k + f.k / 2 * (r / 2), t));
  }
  return registers;
}

SmallVector<Value> KernelBuilder::loadB(Value tile, const Staging &s, Value buffer, int64_t j,
                                        int64_t k, Value g, Value t) {
  SmallVector<Value> registers;
  Value column = add(warpCol, add(g, constant(8 * j)));
  for (int64_t r = 0; r < 2; ++r)
    registers.push_back(fragment(tile, s, buffer, column, k + f.k / 2 * r, t));
  return registers;
}

Value KernelBuilder::fragment(Value tile, const Staging &s, Value buffer, Value row, int64_t k,
                              Value t) {
  SmallVector<Value> elements;
  for (int64_t e = 0; e < f.perRegister; ++e) {
    Value column = add(mul(t, f.perRegister), constant(k + e));
    elements.push_back(scaled(memref::LoadOp::create(b, loc, tile, inTile(s, buffer, row, column)),
                              1.0f / s.scale));
  }
  return pack(elements);
}

} // namespace kiln::nvptx
