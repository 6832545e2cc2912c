// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- MergeKernels.cpp - one function for each kernel that repeats -------===//
//
// Networks repeat their layers: BERT-base's twelve encoder layers, the
// identical 3x3 convolutions of a DenseNet block, a ResNet stage's
// bottlenecks. Once kiln-outline-parallel and kiln-outline-kernels have
// made functions of the kernels, taking their buffers (weights and arena
// views) as arguments, a repeated layer's kernels are the same function
// under different names. Here each set of identical private functions
// becomes one, which all calls share: LLVM optimizes and emits it once,
// and the code is smaller.
//
// Two functions are identical when they have the same type, the same
// attributes but their names, and equivalent bodies (locations aside).
// Task dispatches (declarations) are identical when the first two hold;
// since they name their task, they merge once their tasks have, and
// merging runs until nothing changes. Other declarations never merge.
//
//===----------------------------------------------------------------------===//

#include "codegen/host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {

#define GEN_PASS_DEF_MERGEKERNELS
#include "codegen/host/Passes.h.inc"

namespace {

using namespace mlir;

/// The attributes that make a function what it is: all but its name and
/// visibility.
DictionaryAttr traits(func::FuncOp function) {
  NamedAttrList attributes(function->getAttrDictionary());
  attributes.erase(SymbolTable::getSymbolAttrName());
  attributes.erase(SymbolTable::getVisibilityAttrName());
  return attributes.getDictionary(function.getContext());
}

/// A hash equal for identical functions, so that only functions that may be
/// identical are compared.
llvm::hash_code shapeHash(func::FuncOp function) {
  llvm::hash_code hash = llvm::hash_combine(function.getFunctionType(), traits(function));
  function.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(op, OperationEquivalence::ignoreHashValue,
                                                OperationEquivalence::ignoreHashValue,
                                                OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Whether `a` and `b` are the same kernel, or dispatch the same task. Other
/// declarations (runtime hooks) are what their names say, however alike.
bool identical(func::FuncOp a, func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() || traits(a) != traits(b) ||
      a.isExternal() != b.isExternal())
    return false;
  if (a.isExternal())
    return a->hasAttr(kTaskAttr);
  return OperationEquivalence::isRegionEquivalentTo(&a.getBody(), &b.getBody(),
                                                    OperationEquivalence::IgnoreLocations);
}

/// Merges one round of identical private functions; whether any merged.
bool mergeOnce(ModuleOp module) {
  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp>> kept;
  SmallVector<func::FuncOp> duplicates;
  llvm::DenseMap<Attribute, FlatSymbolRefAttr> originals;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (!function.isPrivate())
      continue;
    SmallVector<func::FuncOp> &candidates = kept[shapeHash(function)];
    auto same = llvm::find_if(candidates, [&](func::FuncOp k) { return identical(k, function); });
    if (same == candidates.end()) {
      candidates.push_back(function);
      continue;
    }
    duplicates.push_back(function);
    originals[FlatSymbolRefAttr::get(function)] = FlatSymbolRefAttr::get(*same);
  }
  if (duplicates.empty())
    return false;
  // One walk renames every use (calls, and the dispatches' tasks).
  AttrTypeReplacer rename;
  rename.addReplacement([&](FlatSymbolRefAttr use) -> std::optional<Attribute> {
    auto original = originals.find(use);
    if (original == originals.end())
      return std::nullopt;
    return original->second;
  });
  for (func::FuncOp duplicate : duplicates)
    duplicate.erase();
  rename.recursivelyReplaceElementsIn(module);
  return true;
}

struct MergeKernels : impl::MergeKernelsBase<MergeKernels> {
  void runOnOperation() override {
    while (mergeOnce(getOperation())) {
    }
  }
};

} // namespace
} // namespace kiln
