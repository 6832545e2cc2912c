// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Driver.cpp - one compilation, from an ONNX file to bytes -----------===//

#include "compiler/driver/Driver.h"

#include "compiler/artifact/Writer.h"
#include "compiler/driver/KernelGraph.h"
#include "dialects/kiln/Dims.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/ScopeExit.h"

namespace kiln {

namespace {

llvm::LogicalResult fail(mlir::MLIRContext &context, const llvm::Twine &message) {
  return mlir::emitError(mlir::UnknownLoc::get(&context)) << message;
}

/// The formats the driver writes itself, from the stage each names.
constexpr EmitFormat kDriverFormats[] = {
    {"artifact", "the .kiln artifact the runtime loads", Stage::Object},
    {"kiln", "the imported kiln dialect", Stage::Imported},
    {"fused", "the kiln dialect after graph optimization", Stage::Graph},
    {"dot", "a Graphviz graph of the host kernels, coloured by precision", Stage::Object},
    {"linalg", "after the kernel generators (linalg on tensors)", Stage::Linalg},
};

bool isDriverFormat(llvm::StringRef name) {
  return llvm::any_of(kDriverFormats,
                      [&](const EmitFormat &format) { return format.name == name; });
}

/// One compilation's state: the checked options, the targets and timing.
class Compilation {
public:
  Compilation(mlir::MLIRContext &context, const CompileOptions &options)
      : context(context), options(options) {
    timingManager.setEnabled(options.timing);
  }

  llvm::FailureOr<std::string> run(llvm::StringRef path);

private:
  llvm::LogicalResult parseTargets();
  llvm::FailureOr<const Target *> oneTarget();
  bool writesArtifact() const { return options.emit == "artifact"; }
  void progress(llvm::StringRef phase) {
    if (options.progress)
      options.progress(phase);
  }
  mlir::OwningOpRef<mlir::ModuleOp> import(llvm::StringRef path);
  llvm::FailureOr<std::string> artifact(mlir::ModuleOp imported);
  /// Refuses a module with symbols beyond --emit linalg for a target that
  /// takes none, after the kernel generators for `target` have named each
  /// op they cannot take yet.
  std::string print(mlir::ModuleOp module);

  mlir::MLIRContext &context;
  const CompileOptions &options;
  llvm::SmallVector<std::unique_ptr<Target>> targets;
  mlir::DefaultTimingManager timingManager;
};

llvm::LogicalResult Compilation::parseTargets() {
  std::vector<std::string> names = options.targets;
  if (names.empty())
    names.push_back("host");
  for (const std::string &name : names) {
    if (writesArtifact()) {
      llvm::Expected<llvm::SmallVector<std::unique_ptr<Target>>> made =
          parseArtifactTargets(name, options.hostCPU);
      if (!made)
        return fail(context, llvm::toString(made.takeError()));
      for (std::unique_ptr<Target> &target : *made)
        targets.push_back(std::move(target));
      continue;
    }
    std::string cpu = options.hostCPU.empty() ? portableHostCPUs().back().str() : options.hostCPU;
    llvm::Expected<std::unique_ptr<Target>> target = parseTarget(name, cpu);
    if (!target)
      return fail(context, llvm::toString(target.takeError()));
    targets.push_back(std::move(*target));
  }
  return llvm::success();
}

/// The one target that IR or code is emitted for. The graph stages and
/// --emit dot take the one --target entry (the host by default); a format
/// of the targets' own, the one entry whose family writes it, or the host
/// when none is named and the host writes it.
llvm::FailureOr<const Target *> Compilation::oneTarget() {
  if (isDriverFormat(options.emit)) {
    if (targets.size() == 1)
      return targets.front().get();
    return fail(context, "--emit " + options.emit +
                             " writes the code of one target; --target names " +
                             llvm::Twine(targets.size()));
  }
  llvm::SmallVector<const Target *> matching;
  for (const std::unique_ptr<Target> &target : targets)
    if (emits(*target, options.emit))
      matching.push_back(target.get());
  if (matching.size() == 1)
    return matching.front();
  if (options.targets.empty())
    return fail(context, "--emit " + options.emit + " needs a --target");
  return fail(context, "--emit " + options.emit + " writes the code of one " +
                           familiesEmitting(options.emit) + " target; --target names " +
                           llvm::Twine(matching.size()));
}

mlir::OwningOpRef<mlir::ModuleOp> Compilation::import(llvm::StringRef path) {
  progress("importing the model");
  mlir::TimingScope root = timingManager.getRootScope();
  mlir::TimingScope importTimer = root.nest("import ONNX");
  mlir::OwningOpRef<mlir::ModuleOp> module = importOnnxFile(context, path, options.import);
  if (module && options.afterImport)
    options.afterImport(*module);
  return module;
}

std::string Compilation::print(mlir::ModuleOp module) {
  mlir::OpPrintingFlags flags;
  if (!options.printWeights)
    flags.elideLargeElementsAttrs(16).elideLargeResourceString(64).useLocalScope();
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, flags);
  os << "\n";
  return text;
}

/// Every target's code and plan in one artifact.
llvm::FailureOr<std::string> Compilation::artifact(mlir::ModuleOp imported) {
  // The manifest describes @main as imported: read it before code
  // generation rewrites the signature.
  auto signature = readSignature(imported);
  if (failed(signature))
    return llvm::failure();
  std::vector<CompiledTarget> compiled(targets.size());
  // The planned modules own their ops; they go when the artifact is written.
  llvm::scope_exit destroy([&] {
    for (CompiledTarget &target : compiled)
      if (target.planned)
        target.planned->erase();
  });
  mlir::TimingScope root = timingManager.getRootScope();
  // Targets compile side by side on the context's threads, each on a clone
  // of its own (LLVM's code generation, most of the time, is one thread per
  // module). Dialects cannot load while threads run: all load first.
  std::vector<mlir::ModuleOp> modules;
  for (CompiledTarget &result : compiled) {
    result.planned = imported.clone();
    modules.push_back(result.planned);
  }
  context.loadAllAvailableDialects();
  for (const std::unique_ptr<Target> &target : targets)
    progress("generating code for " + target->chip().str());
  auto compile = [&](size_t index) -> llvm::LogicalResult {
    const Target &target = *targets[index];
    mlir::ModuleOp module = modules[index];
    {
      mlir::TimingScope codegenTimer = root.nest("code generation for " + target.chip().str());
      if (failed(runPipeline(module, target, Stage::Object, options.graph, options.codegen,
                             codegenTimer)))
        return llvm::failure();
    }
    // The code embeds what it was compiled for, which the loader checks the
    // manifest against.
    llvm::FailureOr<std::string> record = planRecord(target.codeTarget(), *signature, module);
    if (failed(record))
      return llvm::failure();
    module->setAttr(kPlanRecordAttr, mlir::StringAttr::get(&context, *record));
    llvm::FailureOr<TargetCode> code = target.serialize(module, options.codegen, root);
    if (failed(code))
      return llvm::failure();
    static_cast<TargetCode &>(compiled[index]) = std::move(*code);
    return llvm::success();
  };
  if (failed(mlir::failableParallelForEachN(&context, 0, targets.size(), compile)))
    return llvm::failure();
  mlir::TimingScope writeTimer = root.nest("write artifact");
  return writeArtifact(*signature, compiled);
}

llvm::FailureOr<std::string> Compilation::run(llvm::StringRef path) {
  // Targets and options are checked before any time goes into the model.
  llvm::SmallVector<EmitFormat> formats = emitFormats();
  const EmitFormat *format =
      llvm::find_if(formats, [&](const EmitFormat &each) { return each.name == options.emit; });
  if (format == formats.end())
    return fail(context, "unknown --emit format '" + options.emit + "'");
  if (failed(parseTargets()))
    return llvm::failure();
  const Target *target = nullptr;
  if (writesArtifact()) {
    for (const std::unique_ptr<Target> &each : targets)
      if (llvm::Error why = each->checkInArtifact(options.codegen))
        return fail(context, llvm::toString(std::move(why)));
  } else if (format->stage != Stage::Imported) {
    llvm::FailureOr<const Target *> chosen = oneTarget();
    if (failed(chosen))
      return llvm::failure();
    target = *chosen;
  }

  mlir::OwningOpRef<mlir::ModuleOp> module = import(path);
  if (!module)
    return llvm::failure();
  if (writesArtifact())
    return artifact(*module);
  if (format->stage == Stage::Imported)
    return print(*module);

  progress("generating code");
  mlir::TimingScope root = timingManager.getRootScope();
  {
    mlir::TimingScope codegenTimer = root.nest("code generation");
    if (failed(runPipeline(*module, *target, format->stage, options.graph, options.codegen,
                           codegenTimer)))
      return llvm::failure();
  }
  if (options.emit == "dot") {
    std::string graph;
    llvm::raw_string_ostream os(graph);
    printKernelGraph(*module, os);
    return graph;
  }
  if (format->stage == Stage::Object)
    return target->emit(*module, options.emit, root);
  return print(*module);
}

} // namespace

llvm::SmallVector<EmitFormat> emitFormats() {
  llvm::SmallVector<EmitFormat> formats(std::begin(kDriverFormats), std::end(kDriverFormats));
  llvm::append_range(formats, targetEmitFormats());
  return formats;
}

llvm::FailureOr<std::string> compileModel(mlir::MLIRContext &context, llvm::StringRef path,
                                          const CompileOptions &options) {
  return Compilation(context, options).run(path);
}

} // namespace kiln
