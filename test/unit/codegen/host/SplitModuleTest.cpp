// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A lowered host module in parts: what stays together, what crosses, and
// that each part is a module LLVM can translate on its own.

#include "codegen/host/SplitModule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

namespace LLVM = mlir::LLVM;

namespace {

// @main calls two kernels, the kernel-end hook and a task dispatch; the
// dispatch takes the address of its tasks' runner, which calls the task. Each kernel holds a few
// ops more than the last, so that the split has sizes to balance.
constexpr llvm::StringLiteral kModule = R"mlir(
module {
  llvm.func @erff(f32) -> f32
  llvm.func internal @main(%buffer: !llvm.ptr) {
    %kernel = llvm.mlir.constant(0 : i64) : i64
    llvm.call @main_kernel(%buffer) : (!llvm.ptr) -> ()
    llvm.call @kiln_kernel_end(%buffer, %kernel) : (!llvm.ptr, i64) -> ()
    llvm.call @main_tasks.dispatch(%buffer) : (!llvm.ptr) -> ()
    llvm.call @main_kernel_0(%buffer) : (!llvm.ptr) -> ()
    llvm.return
  }
  llvm.func internal @kiln_kernel_end(%context: !llvm.ptr, %kernel: i64) {
    llvm.return
  }
  llvm.func @main_kernel(%buffer: !llvm.ptr) {
    %x = llvm.load %buffer : !llvm.ptr -> f32
    %y = llvm.call @erff(%x) : (f32) -> f32
    llvm.store %y, %buffer : f32, !llvm.ptr
    llvm.return
  }
  llvm.func internal @main_tasks(%buffer: !llvm.ptr, %task: i64) {
    %x = llvm.load %buffer : !llvm.ptr -> f32
    %y = llvm.fadd %x, %x : f32
    %z = llvm.fmul %y, %y : f32
    %w = llvm.fadd %z, %y : f32
    llvm.store %w, %buffer : f32, !llvm.ptr
    llvm.return
  }
  llvm.func internal @main_tasks.run(%captures: !llvm.ptr, %task: i64) {
    %buffer = llvm.load %captures : !llvm.ptr -> !llvm.ptr
    llvm.call @main_tasks(%buffer, %task) : (!llvm.ptr, i64) -> ()
    llvm.return
  }
  llvm.func internal @main_tasks.dispatch(%buffer: !llvm.ptr) {
    %run = llvm.mlir.addressof @main_tasks.run : !llvm.ptr
    llvm.store %run, %buffer : !llvm.ptr, !llvm.ptr
    llvm.return
  }
  llvm.func @main_kernel_0(%buffer: !llvm.ptr) {
    llvm.return
  }
  llvm.func @kiln_entry(%buffers: !llvm.ptr) {
    llvm.call @main(%buffers) : (!llvm.ptr) -> ()
    llvm.return
  }
}
)mlir";

struct Split {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> parts;

  explicit Split(unsigned count) {
    context.loadDialect<LLVM::LLVMDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
    REQUIRE(module);
    parts = kiln::splitHostModule(*module, count);
  }

  /// The part that defines `name`, or -1.
  int definer(llvm::StringRef name) {
    for (auto [index, part] : llvm::enumerate(parts)) {
      auto function = part->lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (function && !function.isExternal())
        return index;
    }
    return -1;
  }
};

} // namespace

TEST_CASE("splitHostModule keeps a kernel's tasks together and @main first", "[split]") {
  Split split(3);
  REQUIRE(split.parts.size() == 3);
  for (mlir::OwningOpRef<mlir::ModuleOp> &part : split.parts)
    CHECK(succeeded(mlir::verify(*part)));
  CHECK(split.definer("main") == 0);
  CHECK(split.definer("kiln_entry") == 0);
  CHECK(split.definer("kiln_kernel_end") == 0);
  int tasks = split.definer("main_tasks.dispatch");
  CHECK(tasks > 0);
  CHECK(split.definer("main_tasks.run") == tasks);
  CHECK(split.definer("main_tasks") == tasks);
  // The largest group (the tasks) and the next (the kernel calling erff)
  // each take a part of their own; the empty kernel joins the lightest.
  CHECK(split.definer("main_kernel") > 0);
  CHECK(split.definer("main_kernel") != tasks);
  // Every part declares the libm function it may call.
  for (mlir::OwningOpRef<mlir::ModuleOp> &part : split.parts)
    CHECK(part->lookupSymbol<LLVM::LLVMFuncOp>("erff"));
}

TEST_CASE("splitHostModule exports across parts, hidden, and nothing else", "[split]") {
  Split split(3);
  int tasks = split.definer("main_tasks.dispatch");
  REQUIRE(tasks > 0);
  auto dispatch = split.parts[tasks]->lookupSymbol<LLVM::LLVMFuncOp>("main_tasks.dispatch");
  CHECK(dispatch.getLinkage() == LLVM::Linkage::External);
  CHECK(dispatch.getVisibility_() == LLVM::Visibility::Hidden);
  // What the dispatch's own part calls stays internal.
  auto run = split.parts[tasks]->lookupSymbol<LLVM::LLVMFuncOp>("main_tasks.run");
  CHECK(run.getLinkage() == LLVM::Linkage::Internal);
  CHECK(split.parts[tasks]->lookupSymbol<LLVM::LLVMFuncOp>("main_tasks").getLinkage() ==
        LLVM::Linkage::Internal);
  // @main's part declares what it calls elsewhere, hidden too.
  auto declared = split.parts[0]->lookupSymbol<LLVM::LLVMFuncOp>("main_tasks.dispatch");
  REQUIRE(declared);
  CHECK(declared.isExternal());
  CHECK(declared.getVisibility_() == LLVM::Visibility::Hidden);
  CHECK_FALSE(split.parts[0]->lookupSymbol<LLVM::LLVMFuncOp>("main_tasks.run"));
  // @main and the entry point stay as they were.
  CHECK(split.parts[0]->lookupSymbol<LLVM::LLVMFuncOp>("main").getLinkage() ==
        LLVM::Linkage::Internal);
  CHECK(split.parts[0]->lookupSymbol<LLVM::LLVMFuncOp>("kiln_entry").getVisibility_() ==
        LLVM::Visibility::Default);
}

TEST_CASE("splitHostModule makes no more parts than groups and leaves the module whole",
          "[split]") {
  Split split(16);
  // Three groups beside @main's: at most four parts.
  CHECK(split.parts.size() == 4);
  CHECK(split.module->lookupSymbol<LLVM::LLVMFuncOp>("main_tasks.dispatch").getLinkage() ==
        LLVM::Linkage::Internal);
  Split one(1);
  REQUIRE(one.parts.size() == 1);
  CHECK(one.definer("main_tasks") == 0);
  CHECK(one.definer("main_kernel_0") == 0);
}

TEST_CASE("splitHostModule leaves a module holding a global whole", "[split]") {
  mlir::MLIRContext context;
  context.loadDialect<LLVM::LLVMDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    module {
      llvm.mlir.global internal @counter(0 : i64) : i64
      llvm.func @main_kernel() {
        llvm.return
      }
      llvm.func @main_kernel_0() {
        llvm.return
      }
    }
  )mlir",
                                                                                     &context);
  REQUIRE(module);
  auto parts = kiln::splitHostModule(*module, 2);
  REQUIRE(parts.size() == 1);
  CHECK(parts[0]->lookupSymbol("counter"));
  CHECK(parts[0]->lookupSymbol<LLVM::LLVMFuncOp>("main_kernel_0"));
}
