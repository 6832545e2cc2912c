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
  let summary = "Tensor operators of a deep-learning model, with static shapes";
  let description = [{
    Every value is a ranked tensor of static shape from the builtin type
    system; kiln adds no tensor type of its own. Weights are `kiln.constant`
    ops, usually holding `dense_resource` blobs so that large weights are
    never copied into the context.
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

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_TD
