// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- ListLaunches.cpp - how the runtime launches each GPU kernel --------===//

#include "codegen/gpu/Passes.h"
#include "dialects/kiln/Dims.h"
#include "dialects/kiln/KilnDialect.h"
#include "runtime/format/DimProgram.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace kiln {

#define GEN_PASS_DEF_LISTLAUNCHES
#include "codegen/gpu/Passes.h.inc"

namespace {

using namespace mlir;

/// The most values `program` holds at once as it runs.
size_t depthOf(ArrayRef<int64_t> program) {
  size_t depth = 0, deepest = 0;
  for (size_t i = 0; i < program.size(); i += 2) {
    auto op = format::DimOp(program[i]);
    depth = op == format::DimOp::Constant || op == format::DimOp::Symbol ? depth + 1 : depth - 1;
    deepest = std::max(deepest, depth);
  }
  return deepest;
}

/// The sizes @main computes from its symbol arguments, as programs the
/// runtime evaluates at each run's values (DimProgram.h): each symbol
/// argument is the symbol of its position in the module's list.
class Programs {
public:
  Programs(func::FuncOp main, ModuleOp module) : main(main) {
    llvm::SmallVector<std::string> names = symbolNames(module);
    for (BlockArgument argument : main.getArguments())
      if (auto name = main.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kSymbolArgAttr))
        if (auto *it = llvm::find(names, name.getValue()); it != names.end())
          symbols[argument] = it - names.begin();
  }

  /// `value`'s program, or failure (reported at `launch`) where it is not
  /// integer arithmetic on symbols and constants.
  FailureOr<SmallVector<int64_t>> of(Value value, Operation *launch) const {
    SmallVector<int64_t> program;
    if (failed(append(value, program, launch)))
      return failure();
    if (!format::validDims({program.data(), program.size()}, symbols.size()))
      return launch->emitError("a GPU kernel takes a size whose program is deeper than ")
             << format::kMaxDimDepth << " values";
    return program;
  }

private:
  using DimOp = format::DimOp;

  static void step(SmallVector<int64_t> &program, DimOp op, int64_t argument = 0) {
    program.push_back(int64_t(op));
    program.push_back(argument);
  }

  LogicalResult append(Value value, SmallVector<int64_t> &program, Operation *launch) const {
    if (std::optional<int64_t> constant = getConstantIntValue(value)) {
      step(program, DimOp::Constant, *constant);
      return success();
    }
    if (auto it = symbols.find(value); it != symbols.end()) {
      step(program, DimOp::Symbol, it->second);
      return success();
    }
    Operation *op = value.getDefiningOp();
    if (!op)
      return launch->emitError("a GPU kernel takes a size that is not computed from the model's "
                               "symbols");
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
      return append(op->getOperand(0), program, launch);
    if (auto dim = dyn_cast<memref::DimOp>(op))
      return appendDim(dim, program, launch);
    if (auto select = dyn_cast<arith::SelectOp>(op))
      return appendDivision(select, program, launch);
    if (auto apply = dyn_cast<affine::AffineApplyOp>(op))
      return appendExpr(apply.getAffineMap().getResult(0), apply.getMapOperands(),
                        apply.getAffineMap().getNumDims(), program, launch);
    // x & ~(2^k - 1), an alignment, is (x floordiv 2^k) * 2^k: sizes are
    // never negative.
    if (auto mask = dyn_cast<arith::AndIOp>(op)) {
      std::optional<int64_t> bits = getConstantIntValue(mask.getRhs());
      if (bits && *bits < 0 && llvm::isPowerOf2_64(uint64_t(-*bits))) {
        if (failed(append(mask.getLhs(), program, launch)))
          return failure();
        step(program, DimOp::Constant, -*bits);
        step(program, DimOp::FloorDiv);
        step(program, DimOp::Constant, -*bits);
        step(program, DimOp::Mul);
        return success();
      }
    }
    std::optional<DimOp> binary =
        llvm::TypeSwitch<Operation *, std::optional<DimOp>>(op)
            .Case<arith::AddIOp, arith::SubIOp>([](auto) { return DimOp::Add; })
            .Case<arith::MulIOp>([](auto) { return DimOp::Mul; })
            .Case<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp>(
                [](auto) { return DimOp::FloorDiv; })
            .Case<arith::CeilDivUIOp, arith::CeilDivSIOp>([](auto) { return DimOp::CeilDiv; })
            .Case<arith::RemUIOp, arith::RemSIOp>([](auto) { return DimOp::Mod; })
            .Case<arith::MaxUIOp, arith::MaxSIOp>([](auto) { return DimOp::Max; })
            .Case<arith::MinUIOp, arith::MinSIOp>([](auto) { return DimOp::Min; })
            .Default([](Operation *) { return std::nullopt; });
    if (!binary)
      return launch->emitError("a GPU kernel takes a size computed by '")
             << op->getName() << "', which the runtime cannot evaluate";
    SmallVector<int64_t> lhs, rhs;
    if (failed(append(op->getOperand(0), lhs, launch)) ||
        failed(append(op->getOperand(1), rhs, launch)))
      return failure();
    // a - b is a + b * -1.
    if (isa<arith::SubIOp>(op)) {
      step(rhs, DimOp::Constant, -1);
      step(rhs, DimOp::Mul);
    }
    // A commutative op runs its deeper operand first, so that a chain of
    // them (a plan's offsets: maxima over the buffers below, each placed
    // by maxima too) holds two values at once, not one a link.
    bool commutative =
        llvm::is_contained({DimOp::Add, DimOp::Mul, DimOp::Max, DimOp::Min}, *binary);
    if (commutative && depthOf(rhs) > depthOf(lhs))
      std::swap(lhs, rhs);
    program.append(lhs);
    program.append(rhs);
    step(program, *binary);
    return success();
  }

  /// A floor or ceiling division or a remainder as expandAffineExpr writes
  /// it (a select on the sign of the dividend or the remainder):
  ///   floordiv: select(a < 0, -1 - (x / b), x / b)
  ///   ceildiv:  select(a <= 0, 0 - (x / b), (x / b) + 1)
  ///   mod:      select(r < 0, r + b, r), r = a % b
  LogicalResult appendDivision(arith::SelectOp select, SmallVector<int64_t> &program,
                               Operation *launch) const {
    auto compare = select.getCondition().getDefiningOp<arith::CmpIOp>();
    std::optional<int64_t> zero = compare ? getConstantIntValue(compare.getRhs()) : std::nullopt;
    Value otherwise = select.getFalseValue();
    auto binary = [&](Value a, Value b, DimOp op) -> LogicalResult {
      if (failed(append(a, program, launch)) || failed(append(b, program, launch)))
        return failure();
      step(program, op);
      return success();
    };
    if (zero == 0 && compare.getPredicate() == arith::CmpIPredicate::slt) {
      if (auto quotient = otherwise.getDefiningOp<arith::DivSIOp>())
        return binary(compare.getLhs(), quotient.getRhs(), DimOp::FloorDiv);
      if (auto remainder = otherwise.getDefiningOp<arith::RemSIOp>();
          remainder && compare.getLhs() == otherwise)
        return binary(remainder.getLhs(), remainder.getRhs(), DimOp::Mod);
    }
    if (zero == 0 && compare.getPredicate() == arith::CmpIPredicate::sle)
      if (auto increment = otherwise.getDefiningOp<arith::AddIOp>())
        if (auto quotient = increment.getLhs().getDefiningOp<arith::DivSIOp>())
          return binary(compare.getLhs(), quotient.getRhs(), DimOp::CeilDiv);
    return launch->emitError("a GPU kernel takes a size chosen by an 'arith.select' the runtime "
                             "cannot evaluate");
  }

  /// A buffer's size, from the views it is made by.
  LogicalResult appendDim(memref::DimOp dim, SmallVector<int64_t> &program,
                          Operation *launch) const;

  LogicalResult appendExpr(AffineExpr expr, ValueRange operands, unsigned dims,
                           SmallVector<int64_t> &program, Operation *launch) const {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      step(program, DimOp::Constant, constant.getValue());
      return success();
    }
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return append(operands[dim.getPosition()], program, launch);
    if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
      return append(operands[dims + symbol.getPosition()], program, launch);
    auto binary = cast<AffineBinaryOpExpr>(expr);
    if (failed(appendExpr(binary.getLHS(), operands, dims, program, launch)) ||
        failed(appendExpr(binary.getRHS(), operands, dims, program, launch)))
      return failure();
    switch (binary.getKind()) {
    case AffineExprKind::Add:
      step(program, DimOp::Add);
      break;
    case AffineExprKind::Mul:
      step(program, DimOp::Mul);
      break;
    case AffineExprKind::FloorDiv:
      step(program, DimOp::FloorDiv);
      break;
    case AffineExprKind::CeilDiv:
      step(program, DimOp::CeilDiv);
      break;
    default:
      step(program, DimOp::Mod);
      break;
    }
    return success();
  }

  func::FuncOp main;
  llvm::DenseMap<Value, int64_t> symbols;
};

using Program = SmallVector<int64_t>;

Program constantProgram(int64_t value) { return {int64_t(format::DimOp::Constant), value}; }

std::optional<int64_t> constantOf(const Program &program) {
  if (program.size() == 2 && program[0] == int64_t(format::DimOp::Constant))
    return program[1];
  return std::nullopt;
}

/// a op b, folded when both are constants.
Program combine(const Program &a, const Program &b, format::DimOp op) {
  std::optional<int64_t> x = constantOf(a), y = constantOf(b);
  if (x && y && op == format::DimOp::Add)
    return constantProgram(*x + *y);
  if (x && y && op == format::DimOp::Mul)
    return constantProgram(*x * *y);
  if (op == format::DimOp::Mul && ((x && *x == 1) || (y && *y == 0)))
    return b;
  if ((op == format::DimOp::Mul && y && *y == 1) || (op == format::DimOp::Add && y && *y == 0))
    return a;
  if (op == format::DimOp::Add && x && *x == 0)
    return b;
  Program out(a);
  out.append(b.begin(), b.end());
  out.push_back(int64_t(op));
  out.push_back(0);
  return out;
}
Program add(const Program &a, const Program &b) { return combine(a, b, format::DimOp::Add); }
Program mul(const Program &a, const Program &b) { return combine(a, b, format::DimOp::Mul); }

/// A buffer argument's descriptor as programs: the byte offset of its
/// memory's view, then its element offset, sizes and strides.
struct Descriptor {
  BlockArgument root;
  Program byteOffset = constantProgram(0), offset = constantProgram(0);
  SmallVector<Program> sizes, strides;
};

class Describer {
public:
  Describer(func::FuncOp main, const Programs &programs, Operation *launch)
      : main(main), programs(programs), launch(launch) {}

  /// `value`'s descriptor, from the views between it and @main's memory.
  FailureOr<Descriptor> describe(Value value) {
    Operation *definition = value.getDefiningOp();
    if (!definition) {
      auto argument = dyn_cast<BlockArgument>(value);
      auto type = dyn_cast<MemRefType>(value.getType());
      if (!argument || argument.getOwner() != &main.front() || !type ||
          !type.getLayout().isIdentity() || !type.hasStaticShape())
        return launch->emitError("a GPU kernel reads a buffer that is not the model's memory");
      Descriptor out{argument};
      if (failed(contiguous(out, type, {})))
        return failure();
      return out;
    }
    if (auto view = dyn_cast<memref::ViewOp>(definition)) {
      FailureOr<Descriptor> source = describe(view.getSource());
      FailureOr<Program> shift = programs.of(view.getByteShift(), launch);
      if (failed(source) || failed(shift))
        return failure();
      Descriptor out{source->root, add(source->byteOffset, *shift)};
      if (failed(contiguous(out, view.getType(), view.getSizes())))
        return failure();
      return out;
    }
    if (auto cast = dyn_cast<memref::CastOp>(definition))
      return describe(cast.getSource());
    if (auto subview = dyn_cast<memref::SubViewOp>(definition)) {
      FailureOr<Descriptor> source = describe(subview.getSource());
      if (failed(source))
        return failure();
      Descriptor out{source->root, source->byteOffset, source->offset};
      llvm::SmallBitVector dropped = subview.getDroppedDims();
      for (auto [d, offset, size, stride] : llvm::enumerate(
               subview.getMixedOffsets(), subview.getMixedSizes(), subview.getMixedStrides())) {
        FailureOr<Program> start = of(offset), extent = of(size), step = of(stride);
        if (failed(start) || failed(extent) || failed(step))
          return failure();
        out.offset = add(out.offset, mul(*start, source->strides[d]));
        if (dropped.test(d))
          continue;
        out.sizes.push_back(*extent);
        out.strides.push_back(mul(source->strides[d], *step));
      }
      return out;
    }
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(definition)) {
      FailureOr<Descriptor> source = describe(expand.getSrc());
      if (failed(source))
        return failure();
      Descriptor out{source->root, source->byteOffset, source->offset};
      SmallVector<OpFoldResult> shape = expand.getMixedOutputShape();
      // A scalar expands to dimensions of size 1, with no reassociation.
      if (expand.getReassociationIndices().empty()) {
        out.sizes.assign(shape.size(), constantProgram(1));
        out.strides.assign(shape.size(), constantProgram(1));
        return out;
      }
      for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
        SmallVector<Program> sizes, strides(group.size());
        for (int64_t dim : group) {
          FailureOr<Program> size = of(shape[dim]);
          if (failed(size))
            return failure();
          sizes.push_back(*size);
        }
        Program stride = source->strides[d];
        for (int64_t i = int64_t(group.size()) - 1; i >= 0; --i) {
          strides[i] = stride;
          stride = mul(stride, sizes[i]);
        }
        out.sizes.append(sizes);
        out.strides.append(strides);
      }
      return out;
    }
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(definition)) {
      FailureOr<Descriptor> source = describe(collapse.getSrc());
      if (failed(source))
        return failure();
      Descriptor out{source->root, source->byteOffset, source->offset};
      for (ReassociationIndices group : collapse.getReassociationIndices()) {
        Program size = constantProgram(1);
        for (int64_t dim : group)
          size = mul(size, source->sizes[dim]);
        out.sizes.push_back(size);
        out.strides.push_back(source->strides[group.back()]);
      }
      return out;
    }
    if (auto reinterpret = dyn_cast<memref::ReinterpretCastOp>(definition)) {
      FailureOr<Descriptor> source = describe(reinterpret.getSource());
      if (failed(source))
        return failure();
      Descriptor out{source->root, source->byteOffset};
      FailureOr<Program> offset = of(reinterpret.getMixedOffsets()[0]);
      if (failed(offset))
        return failure();
      out.offset = *offset;
      for (auto [size, stride] :
           llvm::zip(reinterpret.getMixedSizes(), reinterpret.getMixedStrides())) {
        FailureOr<Program> extent = of(size), step = of(stride);
        if (failed(extent) || failed(step))
          return failure();
        out.sizes.push_back(*extent);
        out.strides.push_back(*step);
      }
      return out;
    }
    return launch->emitError("a GPU kernel reads a buffer made by '")
           << definition->getName() << "', which is not a view of the model's memory";
  }

private:
  FailureOr<Program> of(OpFoldResult value) {
    if (std::optional<int64_t> constant = getConstantIntValue(value))
      return constantProgram(*constant);
    return programs.of(cast<Value>(value), launch);
  }

  /// A contiguous `type`'s sizes and strides, its dynamic sizes `dynamic`.
  LogicalResult contiguous(Descriptor &out, MemRefType type, ValueRange dynamic) {
    for (int64_t size : type.getShape()) {
      if (!ShapedType::isDynamic(size)) {
        out.sizes.push_back(constantProgram(size));
        continue;
      }
      FailureOr<Program> program = programs.of(dynamic.front(), launch);
      if (failed(program))
        return failure();
      dynamic = dynamic.drop_front();
      out.sizes.push_back(*program);
    }
    out.strides.resize(out.sizes.size());
    Program stride = constantProgram(1);
    for (int64_t d = int64_t(out.sizes.size()) - 1; d >= 0; --d) {
      out.strides[d] = stride;
      stride = mul(stride, out.sizes[d]);
    }
    return success();
  }

  func::FuncOp main;
  const Programs &programs;
  Operation *launch;
};

LogicalResult Programs::appendDim(memref::DimOp dim, SmallVector<int64_t> &program,
                                  Operation *launch) const {
  std::optional<int64_t> index = dim.getConstantIndex();
  if (!index)
    return launch->emitError("a GPU kernel takes the size of a buffer's dimension that is not "
                             "constant");
  FailureOr<Descriptor> descriptor = Describer(main, *this, launch).describe(dim.getSource());
  if (failed(descriptor))
    return failure();
  if (*index < 0 || size_t(*index) >= descriptor->sizes.size())
    return launch->emitError("a GPU kernel takes the size of a dimension its buffer lacks");
  program.append(descriptor->sizes[*index]);
  return success();
}

DenseI64ArrayAttr programAttr(OpBuilder &b, const Program &program) {
  return b.getDenseI64ArrayAttr(program);
}

/// A launch argument that is a buffer: the argument of @main it views, the
/// byte offset of the view's aligned pointer there, and the descriptor.
/// What the type states is taken from it; where a size, stride or offset
/// is given at run time, `programs` holds every field's program (byte
/// offset, offset, sizes, strides), which the runtime evaluates per run.
FailureOr<DictionaryAttr> describeBuffer(Value value, func::FuncOp main, const Programs &programs,
                                         OpBuilder &b, Operation *launch) {
  auto type = cast<MemRefType>(value.getType());
  int64_t elementOffset;
  SmallVector<int64_t> strides;
  if (failed(type.getStridesAndOffset(strides, elementOffset)))
    return launch->emitError("a GPU kernel reads a buffer of type ")
           << type << ", whose layout is not strided";
  FailureOr<Descriptor> descriptor = Describer(main, programs, launch).describe(value);
  if (failed(descriptor))
    return failure();
  if (descriptor->sizes.size() != size_t(type.getRank()))
    return launch->emitError("internal error: a GPU kernel's buffer of type ")
           << type << " has a descriptor of another rank";
  // The type is the authority where it is static.
  auto pin = [](Program &program, int64_t value) {
    if (!ShapedType::isDynamic(value))
      program = constantProgram(value);
  };
  pin(descriptor->offset, elementOffset);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    pin(descriptor->sizes[d], type.getShape()[d]);
    pin(descriptor->strides[d], strides[d]);
  }
  SmallVector<Program> fields = {descriptor->byteOffset, descriptor->offset};
  fields.append(descriptor->sizes);
  fields.append(descriptor->strides);
  bool dynamic = llvm::any_of(fields, [](const Program &p) { return !constantOf(p); });
  auto value64 = [](const Program &p) { return constantOf(p).value_or(0); };
  SmallVector<int64_t> sizes, staticStrides;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    sizes.push_back(value64(descriptor->sizes[d]));
    staticStrides.push_back(value64(descriptor->strides[d]));
  }

  BlockArgument argument = descriptor->root;
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
  NamedAttrList entry;
  entry.set("base", b.getStringAttr(base));
  entry.set("index", b.getI64IntegerAttr(index));
  entry.set("byte_offset", b.getI64IntegerAttr(value64(descriptor->byteOffset)));
  entry.set("offset", b.getI64IntegerAttr(value64(descriptor->offset)));
  entry.set("sizes", b.getDenseI64ArrayAttr(sizes));
  entry.set("strides", b.getDenseI64ArrayAttr(staticStrides));
  if (dynamic)
    entry.set("programs", b.getArrayAttr(llvm::map_to_vector(fields, [&](const Program &p) {
      return Attribute(programAttr(b, p));
    })));
  return entry.getDictionary(b.getContext());
}

/// A launch argument that is the address of a tensor map: its buffer, and
/// the map the runtime encodes over it (strides in bytes).
FailureOr<DictionaryAttr> describeTensorMap(TensorMapOp map, func::FuncOp main,
                                            const Programs &programs, OpBuilder &b,
                                            Operation *launch) {
  FailureOr<DictionaryAttr> buffer = describeBuffer(map.getBuffer(), main, programs, b, launch);
  if (failed(buffer))
    return failure();
  if (buffer->get("programs"))
    return launch->emitError("a GPU kernel takes a tensor map over a buffer placed or sized at "
                             "run time, which kiln cannot encode yet");
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

/// A launch argument that is a scalar, as the bits the kernel parameter
/// holds (index is 64 bits wide in kernels); an integer computed from the
/// symbols is its program instead, which the runtime evaluates per run.
FailureOr<DictionaryAttr> describeScalar(Value value, const Programs &programs, OpBuilder &b,
                                         Operation *launch) {
  Type type = value.getType();
  Attribute constant;
  if (!matchPattern(value, m_Constant(&constant))) {
    if (!type.isIndex() && !type.isInteger(64) && !type.isInteger(32))
      return launch->emitError("a GPU kernel takes a scalar of type ")
             << type << " computed by '"
             << (value.getDefiningOp() ? value.getDefiningOp()->getName().getStringRef()
                                       : StringRef("an argument"))
             << "', which the runtime cannot evaluate";
    FailureOr<Program> program = programs.of(value, launch);
    if (failed(program))
      return failure();
    return b.getDictionaryAttr({
        b.getNamedAttr("width", b.getI64IntegerAttr(type.isInteger(32) ? 4 : 8)),
        b.getNamedAttr("bits", b.getI64IntegerAttr(0)),
        b.getNamedAttr("program", programAttr(b, *program)),
    });
  }
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

/// A grid's or block's sizes: constants, or for a grid computed from the
/// symbols, its programs in `dynamic` (a 0 stands in for each size then).
LogicalResult launchSizes(gpu::KernelDim3 dims, const Programs &programs, OpBuilder &b,
                          Operation *launch, StringRef what, NamedAttrList &entry) {
  SmallVector<int64_t> sizes;
  SmallVector<Attribute> dynamic;
  bool isDynamic = false;
  for (Value dim : {dims.x, dims.y, dims.z}) {
    std::optional<int64_t> size = getConstantIntValue(dim);
    if (size && (*size < 1 || *size > std::numeric_limits<int32_t>::max()))
      return launch->emitError("a GPU kernel's ") << what << " size is not positive";
    if (!size && what != "grid")
      return launch->emitError("a GPU kernel's ") << what << " size is not a constant";
    FailureOr<Program> program =
        size ? FailureOr<Program>(constantProgram(*size)) : programs.of(dim, launch);
    if (failed(program))
      return failure();
    isDynamic |= !size;
    sizes.push_back(size.value_or(0));
    dynamic.push_back(programAttr(b, *program));
  }
  entry.set(what, b.getDenseI64ArrayAttr(sizes));
  if (isDynamic)
    entry.set((what + "_programs").str(), b.getArrayAttr(dynamic));
  return success();
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
    Programs programs(main, module);
    SmallVector<Attribute> launches;
    for (Operation &op : main.front()) {
      // Views, and the sizes and offsets computed from the symbols, are
      // what the launches' arguments describe.
      if (isa<arith::ArithDialect, affine::AffineDialect>(op.getDialect()) ||
          isa<func::ReturnOp, memref::DimOp, ViewLikeOpInterface, TensorMapOp>(op))
        continue;
      auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      if (!launch) {
        op.emitError("'")
            << op.getName()
            << "' would run on the host between GPU kernels, which GPU plans cannot do";
        return signalPassFailure();
      }
      NamedAttrList entry;
      entry.set("kernel", launch.getKernelName());
      if (failed(
              launchSizes(launch.getGridSizeOperandValues(), programs, b, launch, "grid", entry)) ||
          failed(
              launchSizes(launch.getBlockSizeOperandValues(), programs, b, launch, "block", entry)))
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
      entry.set("shared", b.getI64IntegerAttr(shared));
      SmallVector<Attribute> args;
      for (Value operand : launch.getKernelOperands()) {
        auto map = operand.getDefiningOp<TensorMapOp>();
        FailureOr<DictionaryAttr> arg = map ? describeTensorMap(map, main, programs, b, launch)
                                        : isa<MemRefType>(operand.getType())
                                            ? describeBuffer(operand, main, programs, b, launch)
                                            : describeScalar(operand, programs, b, launch);
        if (failed(arg))
          return signalPassFailure();
        args.push_back(*arg);
      }
      entry.set("args", b.getArrayAttr(args));
      launches.push_back(entry.getDictionary(&getContext()));
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
