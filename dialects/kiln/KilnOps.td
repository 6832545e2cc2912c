// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KilnOps.td - kiln operators -------------------------*- tablegen -*-===//
//
// One op per operator family member, declared in ops/<Family>.td beside
// ops/<Family>.cpp. Every op infers its result types from
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

// Every kiln value is a ranked tensor, static with an element count that
// fits in int64_t (shapes come from untrusted models, so the verifier checks
// it) or symbolic with each dimension in its #kiln.dims encoding (Dims.h).
def Kiln_TensorPred : CPred<"::kiln::isKilnTensor($_self)">;
class Kiln_TensorOf<list<Type> allowedTypes>
    : RankedTensorOf<allowedTypes, [Kiln_TensorPred],
                     "tensor of static or symbolic shape with at most 2^63 - 1 elements">;

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

// The ops, one file per family, mirroring ops/*.cpp.
include "dialects/kiln/ops/Elementwise.td"
include "dialects/kiln/ops/Contraction.td"
include "dialects/kiln/ops/Normalization.td"
include "dialects/kiln/ops/Pooling.td"
include "dialects/kiln/ops/DataMovement.td"

#endif // KILN_OPS_TD
