// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Host.cpp - kernels to x86-64 code for the host CPU -----------------===//

#include "codegen/host/Host.h"
#include "dialects/kiln/KilnDialect.h"

#include "codegen/Toolchain.h"
#include "codegen/host/Passes.h"
#include "codegen/host/SplitModule.h"

#include "runtime/format/format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Threading.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln {

namespace {

constexpr llvm::StringLiteral kTriple = "x86_64-unknown-linux-gnu";

const llvm::Target *hostTarget() {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  std::string error;
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(kTriple), error);
}

std::string resolveCPU(llvm::StringRef cpu) {
  return cpu == "native" ? llvm::sys::getHostCPUName().str() : cpu.str();
}

} // namespace

bool isKnownHostCPU(llvm::StringRef cpu) {
  return hostTarget() && isKnownChip(kTriple, resolveCPU(cpu));
}

std::string hostLevel(llvm::StringRef cpu) {
  const llvm::Target *target = hostTarget();
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(llvm::Triple(kTriple), resolveCPU(cpu), ""));
  if (info->checkFeatures("+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl"))
    return "x86-64-v4";
  if (info->checkFeatures("+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe"))
    return "x86-64-v3";
  if (info->checkFeatures("+sse4.2,+popcnt,+cx16,+ssse3,+sse4.1"))
    return "x86-64-v2";
  return "x86-64";
}

llvm::LogicalResult buildHostPipeline(mlir::OpPassManager &pm, llvm::StringRef cpu, bool fuse,
                                      llvm::raw_ostream &errors) {
  // Constant weights are packed in the panels the register tiles read;
  // contractions become register tiles as wide as the level's vector
  // registers, in tasks for the runtime's threads, joined by the kernels
  // around them; memory is planned after, so buffers those fusions make
  // dead take none, and what the sizes alone give is kept from run to
  // run (computed again only when they change); the other kernels are split into tasks, then their
  // elementwise bodies, windows and row reductions run on vectors as wide;
  // exp, log, tanh and erf become polynomials (others without an LLVM
  // intrinsic become libm calls); bf16 conversions are expanded into
  // integer arithmetic (no compiler-rt at load time); all of it reaches
  // the LLVM dialect in one conversion.
  std::string level = hostLevel(cpu);
  VectorizeContractionsOptions vectorize;
  vectorize.vectorBits = level == "x86-64-v4" ? 512 : level == "x86-64-v3" ? 256 : 128;
  vectorize.fuse = fuse;
  pm.addNestedPass<mlir::func::FuncOp>(createPackWeights());
  pm.addPass(createBufferize());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseRows());
  pm.addNestedPass<mlir::func::FuncOp>(createVectorizeContractions(vectorize));
  pm.addPass(createKeepSizeValues());
  pm.addPass(createPlanMemory());
  pm.addNestedPass<mlir::func::FuncOp>(createDropEmptyBuffers());
  pm.addPass(createListKernels());
  pm.addPass(createMarkKernelEnds());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createParallelizeKernels());
  VectorizeElementwiseOptions elementwise;
  elementwise.vectorBits = vectorize.vectorBits;
  pm.addNestedPass<mlir::func::FuncOp>(createVectorizeElementwise(elementwise));
  VectorizeWindowsOptions windows;
  windows.vectorBits = vectorize.vectorBits;
  pm.addNestedPass<mlir::func::FuncOp>(createVectorizeWindows(windows));
  VectorizeRowLoopsOptions rowLoops;
  rowLoops.vectorBits = vectorize.vectorBits;
  pm.addNestedPass<mlir::func::FuncOp>(createVectorizeRowLoops(rowLoops));
  pm.addPass(createRebaseSlices());
  pm.addPass(createOutlineParallel());
  pm.addPass(createOutlineKernels());
  pm.addPass(createMergeKernels());
  pm.addPass(createSkipKeptKernels());
  pm.addPass(createApproximateMath());
  pm.addNestedPass<mlir::func::FuncOp>(createExpandReshapes());
  if (failed(mlir::parsePassPipeline(
          "func.func(scf-forall-to-for,convert-linalg-to-loops),expand-strided-metadata,"
          "lower-affine,convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm",
          pm, errors)))
    return llvm::failure();
  pm.addPass(createLowerToLLVM());
  return mlir::parsePassPipeline("reconcile-unrealized-casts", pm, errors);
}

namespace {

/// Defines each task dispatch kiln-outline-parallel declared:
///
///   dispatch(context, captured...):
///     captures = [captured...]           (on the stack, a word each)
///     context->parallel_for(context->pool, @task.run, captures, count)
///   task.run(captures, index):
///     task(captures[0], ..., index)
///
/// after lowering, where function pointers exist. The captured values are
/// buffers and integers (a run's sizes).
llvm::LogicalResult defineTaskDispatches(mlir::ModuleOp module) {
  namespace LLVM = mlir::LLVM;
  mlir::MLIRContext *context = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = mlir::IntegerType::get(context, 64);
  auto i8 = mlir::IntegerType::get(context, 8);
  auto voidType = LLVM::LLVMVoidType::get(context);
  mlir::OpBuilder b(context);
  for (auto dispatch : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
    auto taskName = dispatch->getAttrOfType<mlir::FlatSymbolRefAttr>(kTaskAttr);
    auto count = dispatch->getAttrOfType<mlir::IntegerAttr>(kTaskCountAttr);
    if (!taskName)
      continue;
    auto task = module.lookupSymbol<LLVM::LLVMFuncOp>(taskName.getAttr());
    // Without a count, a run's count is the last argument.
    unsigned captured = dispatch.getNumArguments() - (count ? 1 : 2);
    if (!task || !dispatch.isExternal() || task.getNumArguments() != captured + 1)
      return dispatch.emitError("malformed task dispatch");
    mlir::Location loc = dispatch.getLoc();
    task.setLinkage(LLVM::Linkage::Internal);

    b.setInsertionPointToEnd(module.getBody());
    auto run = LLVM::LLVMFuncOp::create(b, loc, (task.getName() + ".run").str(),
                                        LLVM::LLVMFunctionType::get(voidType, {ptr, i64}),
                                        LLVM::Linkage::Internal);
    mlir::Block *block = run.addEntryBlock(b);
    b.setInsertionPointToStart(block);
    llvm::SmallVector<mlir::Value> arguments;
    for (unsigned i = 0; i < captured; ++i) {
      auto slot = LLVM::GEPOp::create(b, loc, ptr, ptr, block->getArgument(0),
                                      llvm::ArrayRef<LLVM::GEPArg>{int32_t(i)});
      arguments.push_back(
          LLVM::LoadOp::create(b, loc, task.getFunctionType().getParamType(i), slot));
    }
    arguments.push_back(block->getArgument(1));
    LLVM::CallOp::create(b, loc, task, arguments);
    LLVM::ReturnOp::create(b, loc, mlir::ValueRange{});

    dispatch->removeAttr(kTaskAttr);
    dispatch->removeAttr(kTaskCountAttr);
    dispatch.setLinkage(LLVM::Linkage::Internal);
    block = dispatch.addEntryBlock(b);
    b.setInsertionPointToStart(block);
    mlir::Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    mlir::Value captures = LLVM::AllocaOp::create(
        b, loc, ptr, LLVM::LLVMArrayType::get(ptr, std::max(captured, 1u)), one);
    for (unsigned i = 0; i < captured; ++i) {
      auto slot =
          LLVM::GEPOp::create(b, loc, ptr, ptr, captures, llvm::ArrayRef<LLVM::GEPArg>{int32_t(i)});
      LLVM::StoreOp::create(b, loc, block->getArgument(i + 1), slot);
    }
    mlir::Value runtime = block->getArgument(0);
    mlir::Value parallelFor = LLVM::LoadOp::create(b, loc, ptr, runtime);
    auto poolSlot = LLVM::GEPOp::create(
        b, loc, ptr, i8, runtime,
        llvm::ArrayRef<LLVM::GEPArg>{int32_t(offsetof(kiln_host_context_t, pool))});
    mlir::Value pool = LLVM::LoadOp::create(b, loc, ptr, poolSlot);
    mlir::Value body = LLVM::AddressOfOp::create(b, loc, run);
    mlir::Value tasks = count ? LLVM::ConstantOp::create(b, loc, i64, count).getResult()
                              : block->getArguments().back();
    auto signature = LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, ptr, i64});
    LLVM::CallOp::create(b, loc, signature,
                         mlir::ValueRange{parallelFor, pool, body, captures, tasks});
    LLVM::ReturnOp::create(b, loc, mlir::ValueRange{});
  }
  return llvm::success();
}

/// Defines the hook kiln-mark-kernel-ends calls after each kernel:
///
///   kiln_kernel_end(context, kernel):
///     if (context->kernel_end) context->kernel_end(context, kernel)
llvm::LogicalResult defineKernelEndHook(mlir::ModuleOp module) {
  namespace LLVM = mlir::LLVM;
  auto hook = module.lookupSymbol<LLVM::LLVMFuncOp>(kKernelEndHook);
  if (!hook)
    return llvm::success();
  mlir::MLIRContext *context = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = mlir::IntegerType::get(context, 64);
  auto i8 = mlir::IntegerType::get(context, 8);
  auto voidType = LLVM::LLVMVoidType::get(context);
  if (!hook.isExternal() ||
      hook.getFunctionType() != LLVM::LLVMFunctionType::get(voidType, {ptr, i64}))
    return hook.emitError("malformed kernel-end hook");
  mlir::Location loc = hook.getLoc();
  hook.setLinkage(LLVM::Linkage::Internal);
  mlir::OpBuilder b(context);
  mlir::Block *entry = hook.addEntryBlock(b);
  mlir::Block *call = b.createBlock(&hook.getBody());
  mlir::Block *done = b.createBlock(&hook.getBody());
  b.setInsertionPointToStart(entry);
  mlir::Value runtime = entry->getArgument(0);
  auto slot = LLVM::GEPOp::create(
      b, loc, ptr, i8, runtime,
      llvm::ArrayRef<LLVM::GEPArg>{int32_t(offsetof(kiln_host_context_t, kernel_end))});
  mlir::Value callback = LLVM::LoadOp::create(b, loc, ptr, slot);
  mlir::Value null = LLVM::ZeroOp::create(b, loc, ptr);
  mlir::Value unset = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, callback, null);
  LLVM::CondBrOp::create(b, loc, unset, done, call);
  b.setInsertionPointToStart(call);
  LLVM::CallOp::create(b, loc, LLVM::LLVMFunctionType::get(voidType, {ptr, i64}),
                       mlir::ValueRange{callback, runtime, entry->getArgument(1)});
  LLVM::BrOp::create(b, loc, done);
  b.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(b, loc, mlir::ValueRange{});
  return llvm::success();
}

/// Makes `main` take kiln_entry's array of buffer pointers (and symbol
/// values) instead of one argument per buffer, each loaded from the array
/// just before the first operation of the entry block that needs it. Loaded all at once up
/// front, a graph of thousands of inputs and outputs would keep thousands
/// of pointers live across its kernel calls, and LLVM's register allocator
/// takes time that grows with their product to spill them. Folding first
/// takes each pointer out of the memref descriptor that lowering built
/// for it at the top, so that its users are the kernels' calls.
llvm::LogicalResult passBuffersArray(mlir::LLVM::LLVMFuncOp main) {
  if (failed(mlir::applyPatternsGreedily(main, mlir::FrozenRewritePatternSet())))
    return main.emitError("folding @main did not converge");
  mlir::Block &body = main.getBody().front();
  auto ptr = mlir::LLVM::LLVMPointerType::get(main.getContext());
  unsigned count = body.getNumArguments();
  // Where each pointer is first needed, found before anything is inserted
  // (which would renumber the block for every query). The entry block
  // dominates every other block: a user elsewhere needs the pointer loaded
  // before the entry block's terminator.
  llvm::SmallVector<mlir::Operation *> firsts;
  for (mlir::BlockArgument argument : body.getArguments()) {
    mlir::Operation *first = body.getTerminator();
    for (mlir::Operation *user : argument.getUsers()) {
      mlir::Operation *inEntry = body.findAncestorOpInBlock(*user);
      if (inEntry && inEntry->isBeforeInBlock(first))
        first = inEntry;
    }
    firsts.push_back(first);
  }
  mlir::Value buffers = body.addArgument(ptr, main.getLoc());
  mlir::OpBuilder b(main.getContext());
  for (unsigned i = 0; i < count; ++i) {
    mlir::BlockArgument argument = body.getArgument(i);
    b.setInsertionPoint(firsts[i]);
    auto slot = mlir::LLVM::GEPOp::create(b, argument.getLoc(), ptr, ptr, buffers,
                                          llvm::ArrayRef<mlir::LLVM::GEPArg>{int32_t(i)});
    argument.replaceAllUsesWith(
        mlir::LLVM::LoadOp::create(b, argument.getLoc(), argument.getType(), slot));
  }
  body.eraseArguments(0, count);
  // kiln's argument names are no LLVM attributes (the artifact's manifest
  // keeps them).
  main.removeArgAttrsAttr();
  main.setFunctionType(
      mlir::LLVM::LLVMFunctionType::get(mlir::LLVM::LLVMVoidType::get(main.getContext()), {ptr}));
  return llvm::success();
}

} // namespace

llvm::LogicalResult addHostEntryPoint(mlir::ModuleOp module) {
  static_assert(offsetof(kiln_host_context_t, parallel_for) == 0,
                "the dispatch loads parallel_for from the context's first word");
  if (failed(defineTaskDispatches(module)) || failed(defineKernelEndHook(module)))
    return llvm::failure();
  auto main = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>("main");
  if (!main)
    return module.emitError("the lowered module has no @main");
  mlir::MLIRContext *context = module.getContext();
  mlir::Location loc = main.getLoc();
  auto ptr = mlir::LLVM::LLVMPointerType::get(context);
  auto voidType = mlir::LLVM::LLVMVoidType::get(context);
  if (failed(passBuffersArray(main)))
    return llvm::failure();
  mlir::OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  auto entry = mlir::LLVM::LLVMFuncOp::create(b, loc, kHostEntryPoint,
                                              mlir::LLVM::LLVMFunctionType::get(voidType, {ptr}));
  mlir::Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  mlir::LLVM::CallOp::create(b, loc, main, block->getArguments());
  mlir::LLVM::ReturnOp::create(b, loc, mlir::ValueRange{});
  // Only the entry point is exported (kernels, too, would otherwise be
  // called through the PLT).
  for (auto function : module.getOps<mlir::LLVM::LLVMFuncOp>())
    if (!function.isExternal() && function != entry)
      function.setLinkage(mlir::LLVM::Linkage::Internal);
  return llvm::success();
}

namespace {

/// Defines `const char kiln_plan_record[]`, exported, holding `record`.
void definePlanRecord(mlir::ModuleOp module, llvm::StringRef record) {
  namespace LLVM = mlir::LLVM;
  mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(module.getBody());
  std::string text = record.str();
  text.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
  LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true, LLVM::Linkage::External,
                         KILN_PLAN_RECORD_SYMBOL, b.getStringAttr(text));
}

/// Translates `module` to LLVM IR in an LLVM context of its own (so that
/// several compile at once on different threads), optimizes it and emits
/// an object; on failure, says why in `error`.
std::string compileModule(mlir::ModuleOp module, const llvm::Target &target, llvm::StringRef level,
                          mlir::TimingScope &timing, std::string *llvmIR, std::string &error) {
  llvm::TargetOptions options;
  // A multiply feeding an add becomes one fused multiply-add, as C compilers
  // do by default (-ffp-contract=fast): a depthwise window's taps, an
  // epilogue's scale and shift, a normalization's. One rounding instead of
  // two; results move within the tolerances every comparison uses.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  // The code is built for the micro-architecture level the CPU has, which is
  // what the artifact records and the runtime checks: nothing beyond it can
  // be emitted.
  std::unique_ptr<llvm::TargetMachine> machine(
      target.createTargetMachine(llvm::Triple(kTriple), level, "", options, llvm::Reloc::PIC_,
                                 std::nullopt, llvm::CodeGenOptLevel::Aggressive));

  llvm::LLVMContext llvmContext;
  mlir::TimingScope translateTimer = timing.nest("translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, "kiln");
  if (!llvmModule) {
    error = "cannot translate the host code to LLVM IR";
    return {};
  }
  llvmModule->setTargetTriple(llvm::Triple(kTriple));
  llvmModule->setDataLayout(machine->createDataLayout());
  translateTimer.stop();
  mlir::TimingScope optimizeTimer = timing.nest("optimize (-O3)");
  if (llvm::Error failure =
          mlir::makeOptimizingTransformer(3, 0, machine.get())(llvmModule.get())) {
    error = "LLVM optimization failed: " + llvm::toString(std::move(failure));
    return {};
  }
  optimizeTimer.stop();
  if (llvmIR) {
    llvm::raw_string_ostream os(*llvmIR);
    llvmModule->print(os, nullptr);
  }

  mlir::TimingScope emitTimer = timing.nest("emit x86-64 code");
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    error = "LLVM cannot emit x86-64 objects";
    return {};
  }
  codegen.run(*llvmModule);
  return std::string(object.str());
}

} // namespace

llvm::FailureOr<std::vector<std::string>> compileHostObjects(mlir::ModuleOp module,
                                                             llvm::StringRef cpu, unsigned parts,
                                                             mlir::TimingScope &timing,
                                                             std::string *llvmIR) {
  const llvm::Target *target = hostTarget();
  if (!target)
    return module.emitError("LLVM has no x86-64 back end");
  std::string level = hostLevel(cpu);
  if (llvmIR || parts <= 1) {
    std::string error;
    std::string object = compileModule(module, *target, level, timing, llvmIR, error);
    if (!error.empty())
      return module.emitError(error);
    return std::vector<std::string>{std::move(object)};
  }

  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> split;
  {
    mlir::TimingScope splitTimer = timing.nest("split into parts");
    split = splitHostModule(module, parts);
  }
  // The first part exports the plan's record.
  if (auto record = module->getAttrOfType<mlir::StringAttr>(kPlanRecordAttr))
    definePlanRecord(*split.front(), record.getValue());
  std::vector<std::string> objects(split.size()), errors(split.size());
  mlir::parallelFor(module.getContext(), 0, split.size(), [&](size_t part) {
    objects[part] = compileModule(*split[part], *target, level, timing, nullptr, errors[part]);
  });
  for (const std::string &error : errors)
    if (!error.empty())
      return module.emitError(error);
  return objects;
}

llvm::FailureOr<std::string> linkHostCode(mlir::ModuleOp module,
                                          llvm::ArrayRef<std::string> objects) {
  // The code calls libm (erff, tanhf, ...), and converting to and from f16
  // calls libgcc's helpers (__truncsfhf2, ...): it names both libraries
  // itself, so that it loads in any process, whatever its binary exports.
  return linkSharedObject(objects,
                          {"-z", "now", "-L/lib/x86_64-linux-gnu", "-L/usr/lib/x86_64-linux-gnu",
                           "-L/lib64", "-l:libm.so.6", "--as-needed", "-l:libgcc_s.so.1"},
                          [&] { return module.emitError(); });
}

} // namespace kiln
