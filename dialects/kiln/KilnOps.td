// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KilnOps.td - kiln operators -------------------------*- tablegen -*-===//
//
// One op per operator family member. Every op infers its result types from
// its operands and attributes (InferTypeOpAdaptor); the inference is also the
// verifier, so a malformed op is rejected with the reason at its location.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "dialects/kiln/KilnDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Every kiln value is a statically shaped tensor whose element count fits in
// int64_t: shapes come from untrusted models, so the verifier checks it.
def Kiln_CountFitsPred : CPred<"::kiln::elementCount(::llvm::cast<::mlir::ShapedType>($_self).getShape()).has_value()">;
class Kiln_TensorOf<list<Type> allowedTypes>
    : RankedTensorOf<allowedTypes, [HasStaticShapePred, Kiln_CountFitsPred],
                     "statically shaped tensor with at most 2^63 - 1 elements">;

def Kiln_Tensor : Kiln_TensorOf<[AnyFloat, AnyInteger]>;
def Kiln_FloatTensor : Kiln_TensorOf<[AnyFloat]>;
def Kiln_BoolTensor : Kiln_TensorOf<[I1]>;
def Kiln_IndexTensor : Kiln_TensorOf<[I32, I64]>;

class Kiln_InferredOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor]>;

// Ops whose result type is their operand's: ODS derives the inference.
class Kiln_SameTypeOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [Pure, SameOperandsAndResultType,
                                  InferTypeOpInterface]>;

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

//===----------------------------------------------------------------------===//
// Matmul-like operators
//===----------------------------------------------------------------------===//

def Kiln_ConvOp : Kiln_InferredOp<"conv"> {
  let summary = "N-dimensional grouped convolution in NCHW (or NHWC) order";
  let description = [{
    `input` is N x C x D1..Dk, `weight` is M x C/group x K1..Kk and the
    optional `bias` has M elements. `pads` holds the k leading pads followed by
    the k trailing pads; ONNX's auto_pad is resolved into them on import.
    With `channels_last` (layout assignment's NHWC, for one group or a
    depthwise convolution) `input` is N x D1..Dk x C, `weight` K1..Kk x
    C/group x M and the result N x D1..Dk x M.

    ```mlir
    %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64,
           pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
         : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group,
                       UnitAttr:$channels_last);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// One input channel and one filter per group (MobileNet's depthwise
    /// convolutions): no product, but a window per output.
    bool isDepthwise();
  }];
}

def Kiln_GemmOp : Kiln_InferredOp<"gemm"> {
  let summary = "alpha * op(A) x op(B) + beta * C, with op the optional transpose";
  let description = [{
    ```mlir
    %y = kiln.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 1.0 : f32, transA = false, transB = true}
         : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$a, Kiln_FloatTensor:$b,
                       Optional<Kiln_FloatTensor>:$c, F32Attr:$alpha,
                       F32Attr:$beta, BoolAttr:$transA, BoolAttr:$transB);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Kiln_MatMulOp : Kiln_InferredOp<"matmul"> {
  let summary = "NumPy matmul: batched, broadcasting, 1-D operands promoted";
  let description = [{
    ```mlir
    %y = kiln.matmul %a, %b : (tensor<1x128x768xf32>, tensor<768x768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Kiln_BatchNormOp : Kiln_InferredOp<"batch_norm"> {
  let summary = "inference batch normalization over channel dimension 1";
  let description = [{
    ```mlir
    %y = kiln.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f32}
         : (tensor<1x32x112x112xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
         -> tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_FloatTensor:$bias, Kiln_FloatTensor:$mean,
                       Kiln_FloatTensor:$variance, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Kiln_LayerNormOp : Kiln_InferredOp<"layer_norm"> {
  let summary = "normalization over the dimensions from `axis` on";
  let description = [{
    ```mlir
    %y = kiln.layer_norm %x, %gamma, %beta {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
         : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Optional<Kiln_FloatTensor>:$bias, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Kiln_SoftmaxOp : Kiln_SameTypeOp<"softmax"> {
  let summary = "softmax along one axis";
  let description = [{
    ```mlir
    %y = kiln.softmax %x {axis = 3 : i64} : tensor<1x12x128x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling and reductions
//===----------------------------------------------------------------------===//

class Kiln_PoolOp<string mnemonic, string summary_> : Kiln_InferredOp<mnemonic> {
  let summary = summary_;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::inferPoolResult(location, adaptor.getInput().getType(),
          adaptor.getKernelShape(), adaptor.getStrides(), adaptor.getPads(),
          adaptor.getDilations(), adaptor.getCeilMode(), adaptor.getChannelsLast(), types);
    }
  }];
  let description = [{
    Windows over the spatial dimensions of an N x C x D1..Dk input. `pads`
    holds the k leading pads followed by the k trailing pads.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x {ceil_mode = false, count_include_pad = false,
           dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>,
           pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
         : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                       BoolAttr:$count_include_pad, UnitAttr:$channels_last);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_MaxPoolOp : Kiln_PoolOp<"max_pool", "maximum over each window">;
def Kiln_AveragePoolOp : Kiln_PoolOp<"average_pool", "mean over each window">;

def Kiln_GlobalAveragePoolOp : Kiln_InferredOp<"global_average_pool"> {
  let summary = "mean over all spatial dimensions, kept as size 1";
  let description = [{
    ```mlir
    %y = kiln.global_average_pool %x : (tensor<1x2048x7x7xf32>) -> tensor<1x2048x1x1xf32>
    ```

    With `channels_last` the channels are the last dimension instead.
  }];
  let arguments = (ins Kiln_FloatTensor:$input, UnitAttr:$channels_last);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

class Kiln_ReduceOp<string mnemonic, string summary_> : Kiln_InferredOp<mnemonic> {
  let summary = summary_;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::inferReduceResult(location, adaptor.getInput().getType(),
          adaptor.getAxes(), adaptor.getKeepdims(), types);
    }
  }];
  let description = [{
    Reduces over `axes` (sorted, non-negative, unique). The importer turns
    ONNX's "no axes" into every axis, or into no op for
    noop_with_empty_axes.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x {axes = array<i64: 2>, keepdims = true}
         : (tensor<1x128x768xf32>) -> tensor<1x128x1xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", "mean over axes">;
def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "sum over axes">;
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", "maximum over axes">;
def Kiln_ReduceMinOp : Kiln_ReduceOp<"reduce_min", "minimum over axes">;
def Kiln_ReduceProdOp : Kiln_ReduceOp<"reduce_prod", "product over axes">;

class Kiln_ArgReduceOp<string mnemonic, string summary_> : Kiln_InferredOp<mnemonic> {
  let summary = summary_;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      if (::mlir::failed(::kiln::inferReduceResult(location, adaptor.getInput().getType(),
              {int64_t(adaptor.getAxis())}, adaptor.getKeepdims(), types)))
        return ::mlir::failure();
      types[0] = ::llvm::cast<::mlir::RankedTensorType>(types[0]).clone(
          ::mlir::IntegerType::get(context, 64));
      return ::mlir::success();
    }
  }];
  let description = [{
    The index (i64) along `axis` of each row's extreme element: the first
    one, or with `select_last_index` the last one, where several are equal.
    A float row holding NaN gives the index of its first (last) NaN.

    ```mlir
    %i = kiln.}] # mnemonic # [{ %x {axis = 1 : i64, keepdims = false, select_last_index = false}
         : (tensor<4x10xf32>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis, BoolAttr:$keepdims,
                       BoolAttr:$select_last_index);
  let results = (outs Kiln_IndexTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"arg_max", "index of the maximum along an axis">;
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"arg_min", "index of the minimum along an axis">;

def Kiln_CumSumOp : Kiln_SameTypeOp<"cum_sum"> {
  let summary = "running sums along an axis";
  let description = [{
    Element i along `axis` is the sum of elements 0..i (with `exclusive`,
    0..i-1; with `reverse`, i..n-1 or i+1..n-1).

    ```mlir
    %y = kiln.cum_sum %x {axis = 1 : i64, exclusive = false, reverse = false} : tensor<1x128xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis, BoolAttr:$exclusive,
                       BoolAttr:$reverse);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_InferredOp<"reshape"> {
  let summary = "the same elements in a new shape";
  let description = [{
    `shape` is fully resolved (no 0 or -1). ONNX Reshape, Flatten, Squeeze
    and Unsqueeze all import as this op.

    ```mlir
    %y = kiln.reshape %x {shape = array<i64: 1, 128, 12, 64>}
         : (tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_InferredOp<"transpose"> {
  let summary = "permutes dimensions: output dim i is input dim perm[i]";
  let description = [{
    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>}
         : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_InferredOp<"concat"> {
  let summary = "joins tensors along an axis";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_SplitOp : Kiln_InferredOp<"split"> {
  let summary = "cuts a tensor along an axis into pieces of the given sizes";
  let description = [{
    ```mlir
    %a, %b = kiln.split %x {axis = 1 : i64, sizes = array<i64: 2, 6>}
         : (tensor<1x8xf32>) -> (tensor<1x2xf32>, tensor<1x6xf32>)
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Kiln_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_SliceOp : Kiln_InferredOp<"slice"> {
  let summary = "a strided window, one (start, end, step) per dimension";
  let description = [{
    Bounds are normalized: every dimension has an entry, starts and ends are
    clamped into the dimension and steps are non-zero, so dimension i of the
    result has max(0, ceil((ends[i] - starts[i]) / steps[i])) elements. A
    negative step counts down from start to end (end may be -1).

    ```mlir
    %y = kiln.slice %x {ends = array<i64: 1, 128>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
         : (tensor<1x512xi64>) -> tensor<1x128xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_GatherOp : Kiln_InferredOp<"gather"> {
  let summary = "picks slices of `input` along `axis` by index";
  let description = [{
    Negative indices count from the end of the axis.

    ```mlir
    %y = kiln.gather %table, %ids {axis = 0 : i64}
         : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_GatherElementsOp : Kiln_InferredOp<"gather_elements"> {
  let summary = "reads `input` at `indices` along `axis`, position by position";
  let description = [{
    The result has the indices' shape; element p is `input` at p with its
    `axis` coordinate replaced by `indices[p]`. Every other dimension of
    `indices` is at most the input's. Negative indices count from the end;
    out-of-range ones are clamped.

    ```mlir
    %y = kiln.gather_elements %x, %i {axis = 1 : i64}
         : (tensor<3x3xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_GatherNDOp : Kiln_InferredOp<"gather_nd"> {
  let summary = "reads slices of `input` at index tuples (ONNX GatherND)";
  let description = [{
    The last dimension of `indices` (q) holds tuples addressing the q
    dimensions of `input` after its first `batch_dims`, which `indices`
    shares. The result is indices' shape without its last dimension,
    followed by the input's dimensions after those addressed. Negative
    indices count from the end; out-of-range ones are clamped.

    ```mlir
    %y = kiln.gather_nd %x, %i {batch_dims = 0 : i64}
         : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       I64Attr:$batch_dims);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_ScatterElementsOp : Kiln_InferredOp<"scatter_elements"> {
  let summary = "`data` with `updates` written at `indices` along `axis`";
  let description = [{
    Update p goes to `data`'s position p with its `axis` coordinate
    replaced by `indices[p]`, combined with what is there by `reduction`
    (none, add, mul, max or min; `none` replaces; where several updates meet one position, the last
    wins). Indices are as gather_elements's.

    ```mlir
    %y = kiln.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"}
         : (tensor<3x3xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices, Kiln_Tensor:$updates,
                       I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Kiln_ScatterNDOp : Kiln_InferredOp<"scatter_nd"> {
  let summary = "`data` with slices of `updates` written at index tuples";
  let description = [{
    The last dimension of `indices` (q) holds tuples addressing `data`'s
    first q dimensions; `updates` is indices' shape without its last
    dimension followed by `data`'s dimensions after the q addressed. Each
    slice combines with `data` by `reduction` as scatter_elements's.

    ```mlir
    %y = kiln.scatter_nd %x, %i, %u {reduction = "none"}
         : (tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices, Kiln_Tensor:$updates,
                       StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Kiln_ExpandOp : Kiln_InferredOp<"expand"> {
  let summary = "broadcasts a tensor against `shape` (ONNX Expand)";
  let description = [{
    The result shape is the NumPy broadcast of the input's shape and `shape`.

    ```mlir
    %y = kiln.expand %x {shape = array<i64: 4, 128>} : (tensor<1x128xi64>) -> tensor<4x128xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_PadOp : Kiln_InferredOp<"pad"> {
  let summary = "pads (or, with negative pads, crops) every dimension";
  let description = [{
    `pads` holds rank leading pads followed by rank trailing pads.

    ```mlir
    %y = kiln.pad %x {mode = #kiln.pad_mode<constant>, pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f64}
         : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$pads,
                       Kiln_PadModeAttr:$mode, F64Attr:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Kernel arguments (on buffers, after kernel generation)
//===----------------------------------------------------------------------===//

def Kiln_TensorMapOp : Kiln_Op<"tensor_map", [Pure]> {
  let summary = "the device address of a TMA tensor map over a buffer";
  let description = [{
    A GPU kernel that copies tiles of `buffer` into shared memory with the
    Tensor Memory Accelerator (sm_90) takes this address as an argument.
    The map views the buffer as `dims` (innermost first, in elements), the
    elements of dimension i + 1 `strides[i]` elements apart (multiples of
    16 bytes), and copies boxes of `box` elements, their rows swizzled
    within `swizzle` bytes (0, 32, 64 or 128). Elements outside the view
    read as zeros. The runtime encodes the map once the buffer's address is
    known, when a session is created, and passes its address.

    ```mlir
    %map = kiln.tensor_map %a {box = array<i64: 32, 64>, dims = array<i64: 40, 33>,
                               strides = array<i64: 40>, swizzle = 128 : i64} : memref<33x40xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$buffer, DenseI64ArrayAttr:$dims,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$box, I64Attr:$swizzle);
  let results = (outs I64:$map);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

#endif // KILN_OPS_TD
