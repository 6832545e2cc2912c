// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- SplitModule.cpp - a host module in parts, compiled apart -----------===//

#include "codegen/host/SplitModule.h"

#include "codegen/host/Host.h"
#include "codegen/host/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace kiln {

namespace {

namespace LLVM = mlir::LLVM;

struct Function {
  LLVM::LLVMFuncOp op;
  /// The functions its body names (callees, addresses taken), defined or
  /// not.
  llvm::SmallVector<unsigned> uses;
  /// Its ops: what LLVM's time on it grows with.
  size_t size = 0;
  unsigned part = 0;
};

} // namespace

llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> splitHostModule(mlir::ModuleOp module,
                                                                     unsigned parts) {
  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> result;
  std::vector<Function> functions;
  llvm::StringMap<unsigned> byName;
  for (mlir::Operation &op : module.getBody()->getOperations()) {
    auto function = llvm::dyn_cast<LLVM::LLVMFuncOp>(op);
    // Anything but functions (a global, a comdat) could be state the parts
    // would have to share: such a module stays whole.
    if (!function) {
      result.push_back(module.clone());
      return result;
    }
    byName[function.getName()] = functions.size();
    functions.push_back({function, {}, 0, 0});
  }
  for (Function &function : functions) {
    if (function.op.isExternal())
      continue;
    function.op.walk([&](mlir::Operation *) { ++function.size; });
    if (std::optional<mlir::SymbolTable::UseRange> uses =
            mlir::SymbolTable::getSymbolUses(&function.op.getBody()))
      for (const mlir::SymbolTable::SymbolUse &use : *uses) {
        auto callee = byName.find(use.getSymbolRef().getRootReference());
        if (callee != byName.end())
          function.uses.push_back(callee->second);
      }
  }

  // Groups of functions that reference one another (a kernel, its task
  // dispatch and tasks) compile together, so that LLVM inlines and
  // specializes within them as it did in one module. @main, the entry
  // point and the hook @main calls after each kernel (inlined there) anchor
  // the first group; what they call is other groups' business.
  auto isAnchor = [](LLVM::LLVMFuncOp function) {
    return llvm::is_contained({llvm::StringRef("main"), llvm::StringRef(kHostEntryPoint),
                               llvm::StringRef(kKernelEndHook)},
                              function.getName());
  };
  llvm::EquivalenceClasses<unsigned> groups;
  std::optional<unsigned> anchors;
  for (auto [index, function] : llvm::enumerate(functions)) {
    if (function.op.isExternal())
      continue;
    groups.insert(index);
    if (isAnchor(function.op)) {
      if (anchors)
        groups.unionSets(*anchors, index);
      anchors = index;
      continue;
    }
    for (unsigned use : function.uses)
      if (!functions[use].op.isExternal() && !isAnchor(functions[use].op))
        groups.unionSets(index, use);
  }

  // The anchors' group goes to the first part; then the largest group
  // first, each to the part with the fewest ops so far.
  struct Group {
    unsigned leader;
    bool anchors;
    size_t size;
  };
  llvm::SmallVector<Group> sized;
  for (const auto *member : groups) {
    if (!member->isLeader())
      continue;
    unsigned leader = member->getData();
    Group group{leader, anchors && groups.isEquivalent(leader, *anchors), 0};
    for (unsigned index : groups.members(*member))
      group.size += functions[index].size;
    sized.push_back(group);
  }
  llvm::stable_sort(sized, [](const Group &a, const Group &b) {
    return std::make_tuple(!a.anchors, -int64_t(a.size)) <
           std::make_tuple(!b.anchors, -int64_t(b.size));
  });
  parts = std::max<size_t>(1, std::min<size_t>(parts, sized.size()));
  llvm::SmallVector<size_t> load(parts, 0);
  for (const Group &group : sized) {
    unsigned part = llvm::min_element(load) - load.begin();
    load[part] += group.size;
    for (unsigned index : groups.members(group.leader))
      functions[index].part = part;
  }

  // A defined function named from another part is external there, and
  // hidden: only the entry point leaves the shared object.
  llvm::SmallVector<llvm::SetVector<unsigned>> declared(parts);
  for (auto [index, function] : llvm::enumerate(functions)) {
    if (function.op.isExternal())
      continue;
    for (unsigned use : function.uses)
      if (!functions[use].op.isExternal() && functions[use].part != function.part)
        declared[function.part].insert(use);
  }
  llvm::DenseSet<unsigned> crossing;
  for (const llvm::SetVector<unsigned> &part : declared)
    crossing.insert(part.begin(), part.end());
  auto exportFromPart = [](LLVM::LLVMFuncOp function) {
    function.setLinkage(LLVM::Linkage::External);
    function.setVisibility_(LLVM::Visibility::Hidden);
  };

  for (unsigned part = 0; part < parts; ++part) {
    auto split = mlir::ModuleOp::create(module.getLoc());
    split->setAttrs(module->getAttrDictionary());
    mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(split.getBody());
    for (auto [index, function] : llvm::enumerate(functions)) {
      if (function.op.isExternal() || function.part == part) {
        auto clone = llvm::cast<LLVM::LLVMFuncOp>(b.clone(*function.op.getOperation()));
        if (crossing.contains(index))
          exportFromPart(clone);
      } else if (declared[part].contains(index)) {
        exportFromPart(
            llvm::cast<LLVM::LLVMFuncOp>(b.cloneWithoutRegions(*function.op.getOperation())));
      }
    }
    result.push_back(split);
  }
  return result;
}

} // namespace kiln
