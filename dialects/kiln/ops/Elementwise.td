// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Elementwise.td - constants, elementwise ops and casts ---*- tablegen -*-===//
//
// Included by dialects/kiln/KilnOps.td, whose base classes (Kiln_InferredOp,
// Kiln_Tensor, ...) these ops build on; the C++ beside it, ops/Elementwise.cpp,
// has their inference, verifiers and folders.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_InferredOp<"constant", [ConstantLike]> {
  let summary = "a constant tensor (a weight, or a folded value)";
  let description = [{
    ```mlir
    %w = kiln.constant dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Kiln_DimsOp : Kiln_Op<"dims", [ConstantLike, Pure]> {
  let summary = "an integer tensor of sizes, some of them symbolic";
  let description = [{
    What ONNX's Shape and the arithmetic on it compute when a dimension is
    symbolic: element i is result i of the map, an expression of the
    module's symbols. Folding carries it through gathers, slices,
    concatenations, reshapes, casts and arithmetic into the attributes of
    the ops it shapes (a reshape's `dims`), as constants are.

    ```mlir
    %s = kiln.dims(<()[s0] -> (s0, 768)>) : tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_DimsAttr:$value);
  let results = (outs Kiln_IndexTensor:$output);
  let assemblyFormat = "`(` $value `)` attr-dict `:` type($output)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise operators (ONNX/NumPy broadcasting)
//===----------------------------------------------------------------------===//

// `elements` names the rule for the result's element type (see
// BinaryElementRule in KilnDialect.h).
class Kiln_BinaryOp<string mnemonic, string summary_, string elements = "SameAsOperands">
    : Kiln_InferredOp<mnemonic> {
  let summary = summary_;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::inferBinaryResult(location, adaptor.getLhs().getType(),
          adaptor.getRhs().getType(), ::kiln::BinaryElementRule::}] # elements # [{, types);
    }
  }];
  let description = [{
    Applies the operator elementwise after NumPy-style broadcasting of both
    operands. Both operands have the same element type.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "elementwise addition">;
def Kiln_SubOp : Kiln_BinaryOp<"sub", "elementwise subtraction">;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "elementwise multiplication">;
def Kiln_DivOp : Kiln_BinaryOp<"div", "elementwise division (truncating for integers)">;
def Kiln_PowOp : Kiln_BinaryOp<"pow", "elementwise power; the result has the base's type", "Base"> {
  let description = [{
    An integer base raised to a power is computed in f64 and truncated
    toward zero, as onnxruntime does.

    ```mlir
    %y = kiln.pow %x, %e : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xi32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_EqualOp : Kiln_BinaryOp<"equal", "elementwise equality, giving i1", "Bool"> {
  let results = (outs Kiln_BoolTensor:$output);
}

class Kiln_CompareOp<string mnemonic, string summary_>
    : Kiln_BinaryOp<mnemonic, summary_ # ", giving i1 (false where either float is NaN)", "Bool"> {
  let results = (outs Kiln_BoolTensor:$output);
}
def Kiln_GreaterOp : Kiln_CompareOp<"greater", "lhs > rhs">;
def Kiln_LessOp : Kiln_CompareOp<"less", "lhs < rhs">;
def Kiln_GreaterOrEqualOp : Kiln_CompareOp<"greater_or_equal", "lhs >= rhs">;
def Kiln_LessOrEqualOp : Kiln_CompareOp<"less_or_equal", "lhs <= rhs">;

def Kiln_MinOp : Kiln_BinaryOp<"min", "elementwise minimum (NaN where either float is NaN)">;
def Kiln_MaxOp : Kiln_BinaryOp<"max", "elementwise maximum (NaN where either float is NaN)">;

def Kiln_ModOp : Kiln_BinaryOp<"mod", "elementwise remainder"> {
  let description = [{
    With `fmod` false (integers only), the remainder takes the divisor's
    sign, as Python's `%`; with `fmod` true, the dividend's, as C's `fmod`.
    A remainder by zero is zero: no input makes the kernel trap.

    ```mlir
    %y = kiln.mod %a, %b {fmod = false} : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$lhs, Kiln_Tensor:$rhs, BoolAttr:$fmod);
}

def Kiln_PReluOp : Kiln_BinaryOp<"prelu", "x if x >= 0, else slope * x (slope broadcast)"> {
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$output);
}

// On i1 the logical operators; on wider integers the bitwise ones.
def Kiln_BitsTensor : Kiln_TensorOf<[AnyInteger]>;
class Kiln_LogicalOp<string mnemonic, string summary_> : Kiln_BinaryOp<mnemonic, summary_> {
  let arguments = (ins Kiln_BitsTensor:$lhs, Kiln_BitsTensor:$rhs);
  let results = (outs Kiln_BitsTensor:$output);
}
def Kiln_AndOp : Kiln_LogicalOp<"and", "logical (bitwise) and">;
def Kiln_OrOp : Kiln_LogicalOp<"or", "logical (bitwise) or">;
def Kiln_XorOp : Kiln_LogicalOp<"xor", "logical (bitwise) exclusive or">;

def Kiln_BitShiftOp : Kiln_BinaryOp<"bit_shift", "elementwise shift of unsigned integers"> {
  let description = [{
    Shifts each element of `lhs` left (`left` true) or right (logically) by
    the matching element of `rhs`. A shift by the width or more gives zero.

    ```mlir
    %y = kiln.bit_shift %x, %s {left = true} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
    ```
  }];
  let arguments = (ins Kiln_BitsTensor:$lhs, Kiln_BitsTensor:$rhs, BoolAttr:$left);
  let results = (outs Kiln_BitsTensor:$output);
}

def Kiln_WhereOp : Kiln_InferredOp<"where"> {
  let summary = "elementwise select, broadcasting all three operands";
  let description = [{
    ```mlir
    %y = kiln.where %c, %a, %b : (tensor<1x1x1x8xi1>, tensor<f32>, tensor<1x12x8x8xf32>) -> tensor<1x12x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

class Kiln_UnaryOp<string mnemonic, string summary_>
    : Kiln_SameTypeOp<mnemonic, [Elementwise]> {
  let summary = summary_;
  let description = [{
    ```mlir
    %y = kiln.}] # mnemonic # [{ %x : tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "square root">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "natural exponential">;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "Gauss error function">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "hyperbolic tangent">;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "logistic sigmoid 1 / (1 + exp(-x))">;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)">;
def Kiln_HardSwishOp : Kiln_UnaryOp<"hard_swish", "x * max(0, min(1, x / 6 + 1 / 2))">;
def Kiln_GeluOp : Kiln_UnaryOp<"gelu", "x * (1 + erf(x / sqrt(2))) / 2, the exact GELU">;

// Float functions that fold on constants, so that shape and mask
// computations (T5's relative-position buckets take a log) become constants.
class Kiln_MathOp<string mnemonic, string summary_> : Kiln_UnaryOp<mnemonic, summary_> {
  let hasFolder = 1;
}
def Kiln_LogOp : Kiln_MathOp<"log", "natural logarithm">;
def Kiln_SinOp : Kiln_MathOp<"sin", "sine">;
def Kiln_CosOp : Kiln_MathOp<"cos", "cosine">;
def Kiln_TanOp : Kiln_MathOp<"tan", "tangent">;
def Kiln_AsinOp : Kiln_MathOp<"asin", "arcsine">;
def Kiln_AcosOp : Kiln_MathOp<"acos", "arccosine">;
def Kiln_AtanOp : Kiln_MathOp<"atan", "arctangent">;
def Kiln_SinhOp : Kiln_MathOp<"sinh", "hyperbolic sine">;
def Kiln_CoshOp : Kiln_MathOp<"cosh", "hyperbolic cosine">;
def Kiln_AsinhOp : Kiln_MathOp<"asinh", "inverse hyperbolic sine">;
def Kiln_AcoshOp : Kiln_MathOp<"acosh", "inverse hyperbolic cosine">;
def Kiln_AtanhOp : Kiln_MathOp<"atanh", "inverse hyperbolic tangent">;
def Kiln_FloorOp : Kiln_MathOp<"floor", "the largest integer not above x">;
def Kiln_CeilOp : Kiln_MathOp<"ceil", "the smallest integer not below x">;
def Kiln_RoundOp : Kiln_MathOp<"round", "the nearest integer, halves to even">;
def Kiln_ReciprocalOp : Kiln_MathOp<"reciprocal", "1 / x">;
def Kiln_SoftplusOp : Kiln_MathOp<"softplus", "log(1 + exp(x)), computed without overflow">;
def Kiln_SoftsignOp : Kiln_MathOp<"softsign", "x / (1 + |x|)">;

def Kiln_EluOp : Kiln_UnaryOp<"elu", "x if x > 0, else alpha * (exp(x) - 1)"> {
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha);
}
def Kiln_SeluOp : Kiln_UnaryOp<"selu", "gamma * (x if x > 0, else alpha * (exp(x) - 1))"> {
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha, F32Attr:$gamma);
}
def Kiln_CeluOp : Kiln_UnaryOp<"celu", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))"> {
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha);
}
def Kiln_ThresholdedReluOp : Kiln_UnaryOp<"thresholded_relu", "x if x > alpha, else 0"> {
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha);
}

// Integers too.
class Kiln_NumericOp<string mnemonic, string summary_> : Kiln_UnaryOp<mnemonic, summary_> {
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$output);
  let hasFolder = 1;
}
def Kiln_AbsOp : Kiln_NumericOp<"abs", "absolute value">;
def Kiln_NegOp : Kiln_NumericOp<"neg", "negation">;
def Kiln_SignOp : Kiln_NumericOp<"sign", "-1, 0 or 1 (NaN for NaN)">;

def Kiln_NotOp : Kiln_UnaryOp<"not", "logical (bitwise) negation"> {
  let arguments = (ins Kiln_BitsTensor:$input);
  let results = (outs Kiln_BitsTensor:$output);
  let hasFolder = 1;
}

// Float tests giving i1.
class Kiln_FloatTestOp<string mnemonic, string summary_>
    : Kiln_InferredOp<mnemonic, [Elementwise]> {
  let summary = summary_;
  let description = [{
    ```mlir
    %y = kiln.}] # mnemonic # [{ %x : tensor<8xf32> -> tensor<8xi1>
    ```
  }];
  let results = (outs Kiln_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location>, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      auto type = ::llvm::cast<::mlir::RankedTensorType>(adaptor.getInput().getType());
      types.push_back(type.clone(::mlir::IntegerType::get(context, 1)));
      return ::mlir::success();
    }
  }];
  let hasFolder = 1;
}
def Kiln_IsNaNOp : Kiln_FloatTestOp<"is_nan", "whether x is NaN"> {
  let arguments = (ins Kiln_FloatTensor:$input);
}
def Kiln_IsInfOp : Kiln_FloatTestOp<"is_inf", "whether x is an infinity of a detected sign"> {
  let arguments = (ins Kiln_FloatTensor:$input, BoolAttr:$detect_positive,
                       BoolAttr:$detect_negative);
}

def Kiln_RoundToOp : Kiln_UnaryOp<"round_to", "x rounded to a narrower format, kept in f32"> {
  let description = [{
    Each element becomes `round(x / scale) * scale`, with `round` to the
    nearest value of `format` (tf32, fp16, bf16, fp8 or fp8-fnuz, ties to
    even; fp8's E4M3FN saturates at +-448, fp8-fnuz's E4M3FNUZ at +-240):
    what a matrix product reading its operand in
    that format sees. Precision assignment inserts it before the
    activations a low-precision Conv, Gemm or MatMul reads.

    ```mlir
    %y = kiln.round_to %x {format = "fp8", scale = 0.0125 : f32} : tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, StrAttr:$format, F32Attr:$scale);
  let hasVerifier = 1;
}

def Kiln_LeakyReluOp : Kiln_UnaryOp<"leaky_relu", "x if x >= 0, else alpha * x"> {
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha);
}

def Kiln_HardSigmoidOp : Kiln_UnaryOp<"hard_sigmoid", "max(0, min(1, alpha * x + beta))"> {
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha, F32Attr:$beta);
}

def Kiln_ClipOp : Kiln_UnaryOp<"clip", "min(max(x, min), max)"> {
  let description = [{
    The bounds are attributes: the importer folds ONNX's bound inputs (opset
    11 and later) and attributes (earlier opsets) into them. An absent bound
    is the float type's infinity.

    ```mlir
    %y = kiln.clip %x {max = 6.0 : f64, min = 0.0 : f64} : tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, F64Attr:$min, F64Attr:$max);
  let hasVerifier = 1;
}

def Kiln_CastOp : Kiln_InferredOp<"cast"> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    ```mlir
    %y = kiln.cast %x {to = f32} : tensor<1x128xi64> -> tensor<1x128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, TypeAttr:$to);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}
