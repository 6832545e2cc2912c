// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Pooling.td - pooling and reductions -----------------*- tablegen -*-===//
//
// Included by dialects/kiln/KilnOps.td, whose base classes (Kiln_InferredOp,
// Kiln_Tensor, ...) these ops build on; the C++ beside it, ops/Pooling.cpp,
// has their inference, verifiers and folders.
//
//===----------------------------------------------------------------------===//

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
