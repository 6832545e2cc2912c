// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KilnDialect.td - the kiln graph dialect -------------*- tablegen -*-===//
//
// The kiln dialect holds a model as a graph of tensor operators with static
// shapes. The ONNX importer normalizes every opset's spelling of an operator
// into one op with attributes (axes, pads, sizes, bounds are attributes, never
// runtime tensors), so passes and code generators see a single form.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let summary = "Tensor operators of a deep-learning model";
  let description = [{
    Every value is a ranked tensor from the builtin type system; kiln adds
    no tensor type of its own. A dimension is a size, or an expression of
    the model's symbols (the sizes a model takes at run time: a batch, a
    sequence length): such a type is `?` there and carries every dimension
    as an expression in its encoding, `tensor<?x768xf32,
    #kiln.dims<()[s0] -> (s0, 768)>>`; the module's `kiln.symbols` names
    each symbol and its range. Weights are `kiln.constant` ops, usually
    holding `dense_resource` blobs so that large weights are never copied
    into the context.
  }];
  let cppNamespace = "::kiln";
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
}

// Pad's fill rule.
def Kiln_PadMode : I32EnumAttr<"PadMode", "how kiln.pad fills the border", [
    I32EnumAttrCase<"constant", 0>,
    I32EnumAttrCase<"reflect", 1>,
    I32EnumAttrCase<"edge", 2>
  ]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_PadModeAttr : EnumAttr<Kiln_Dialect, Kiln_PadMode, "pad_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

class Kiln_Attr<string name, string attrMnemonic> : AttrDef<Kiln_Dialect, name> {
  let mnemonic = attrMnemonic;
}

// A tensor type's dimensions, or an integer tensor's elements, as
// expressions of the module's symbols (s0 is kiln.symbols[0]): a map of no
// dimensions with one result per tensor dimension or element. Constant
// results are sizes.
def Kiln_DimsAttr : Kiln_Attr<"Dims", "dims"> {
  let summary = "sizes as expressions of the model's symbols";
  let parameters = (ins "::mlir::AffineMap":$map);
  let assemblyFormat = "`<` $map `>`";
  let genVerifyDecl = 1;
}

// One of the sizes a model takes at run time, as the module's kiln.symbols
// lists them: its name (the model's dim_param, or INPUT.D for an unnamed
// dimension), the range it may take and the size kernels are tuned for.
def Kiln_SymbolAttr : Kiln_Attr<"Symbol", "symbol"> {
  let summary = "a size known at run time, with its range";
  let parameters = (ins StringRefParameter<>:$name, "int64_t":$min, "int64_t":$max,
                        "int64_t":$opt);
  let assemblyFormat = "`<` $name `,` $min `,` $max `,` $opt `>`";
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_TD
