//===- kiln.cpp - the kiln command line -----------------------------------===//
//
//   kiln compile model.onnx --emit kiln
//   kiln compile model.onnx --target sm_90 --emit ptx -o model.ptx
//   kiln compile model.onnx --target gfx942 --emit hsaco -o model.hsaco
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/Importer.h"
#include "compiler/pipeline/Pipeline.h"
#include "codegen/amdgpu/AMDGPU.h"
#include "codegen/gpu/GpuCodegen.h"
#include "codegen/nvptx/NVPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace kiln;

namespace {

cl::SubCommand compileCommand("compile", "Compile an ONNX model");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::sub(compileCommand));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::sub(compileCommand));

enum class Emit { Kiln, Linalg, Kernels, PTX, AMDGCN, HSACO };
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Kiln),
    cl::values(clEnumValN(Emit::Kiln, "kiln", "the imported kiln dialect"),
               clEnumValN(Emit::Linalg, "linalg", "after the kernel generators (linalg on tensors)"),
               clEnumValN(Emit::Kernels, "kernels", "after GPU kernel formation (gpu.module @kernels)"),
               clEnumValN(Emit::PTX, "ptx", "PTX for an NVIDIA --target"),
               clEnumValN(Emit::AMDGCN, "amdgcn", "AMDGPU assembly for an AMD --target"),
               clEnumValN(Emit::HSACO, "hsaco", "an HSA code object (ELF) for an AMD --target")),
    cl::sub(compileCommand));
cl::opt<std::string> targetList(
    "target", cl::desc("Comma-separated targets: sm_80, sm_90a, gfx90a, gfx942, ..."),
    cl::value_desc("list"), cl::sub(compileCommand));
cl::list<std::string> inputShapes(
    "input-shape", cl::desc("Fix an input's shape, e.g. input=1x3x224x224 (repeatable)"),
    cl::value_desc("name=shape"), cl::sub(compileCommand));
cl::opt<bool> printWeights("print-weights",
                           cl::desc("Print weights in full instead of eliding them"),
                           cl::sub(compileCommand));
cl::opt<bool> timing("timing", cl::desc("Report the time of each compilation phase"),
                     cl::sub(compileCommand));

/// Whether any error was reported: some MLIR components report an error
/// and carry on, and kiln must still exit non-zero.
bool reportedError = false;

/// Prints diagnostics as "kiln: error: [where: ]message". The importer's
/// messages already name the file and node; other locations are node names.
LogicalResult printDiagnostic(mlir::Diagnostic &diag) {
  raw_ostream &os = errs();
  auto severity = diag.getSeverity();
  reportedError |= severity == mlir::DiagnosticSeverity::Error;
  os << "kiln: ";
  if (severity == mlir::DiagnosticSeverity::Error)
    WithColor(os, HighlightColor::Error) << "error: ";
  else if (severity == mlir::DiagnosticSeverity::Warning)
    WithColor(os, HighlightColor::Warning) << "warning: ";
  else
    WithColor(os, HighlightColor::Note) << "note: ";
  mlir::Location loc = diag.getLocation();
  if (auto name = dyn_cast<mlir::NameLoc>(loc))
    os << "node '" << name.getName().getValue() << "': ";
  else if (auto file = dyn_cast<mlir::FileLineColLoc>(loc))
    os << file.getFilename().getValue() << ": ";
  os << diag.str() << "\n";
  for (mlir::Diagnostic &note : diag.getNotes())
    os << "kiln: note: " << note.str() << "\n";
  return success();
}

LogicalResult fail(const Twine &message) {
  WithColor::error(errs(), "kiln") << message << "\n";
  return failure();
}

/// The one target that a per-target --emit asks for.
FailureOr<Target> singleTarget(Target::Kind kind, StringRef what) {
  std::string error;
  if (targetList.empty())
    return fail(Twine("--emit ") + what + " needs a --target");
  auto targets = parseTargets(targetList, error);
  if (failed(targets))
    return fail(error);
  SmallVector<Target> matching;
  for (const Target &target : *targets)
    if (target.kind == kind)
      matching.push_back(target);
  if (matching.size() != 1)
    return fail(Twine("--emit ") + what + " writes the code of one " +
                (kind == Target::Kind::NVPTX ? "NVIDIA (sm_*)" : "AMD (gfx*)") +
                " target; --target names " + Twine(matching.size()));
  return matching.front();
}

LogicalResult runCompile() {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  registerCompilerPasses();
  mlir::MLIRContext context(registry);
  // Messages name the node; a dump of the failing op helps no user.
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler handler(&context, printDiagnostic);

  ImportOptions options;
  for (const std::string &spec : inputShapes)
    if (std::string error = parseInputShape(spec, options); !error.empty())
      return fail(error);

  // Validate the target before spending time on the model.
  std::optional<Target> target;
  if (emit == Emit::PTX || emit == Emit::AMDGCN || emit == Emit::HSACO ||
      emit == Emit::Kernels) {
    auto chosen = emit == Emit::PTX || (emit == Emit::Kernels && StringRef(targetList).starts_with("sm_"))
                      ? singleTarget(Target::Kind::NVPTX, emit == Emit::PTX ? "ptx" : "kernels")
                      : singleTarget(Target::Kind::AMDGPU,
                                     emit == Emit::Kernels ? "kernels"
                                     : emit == Emit::HSACO ? "hsaco" : "amdgcn");
    if (failed(chosen))
      return failure();
    target = *chosen;
  }

  mlir::DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  mlir::TimingScope root = timingManager.getRootScope();

  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    mlir::TimingScope importTimer = root.nest("import ONNX");
    module = importOnnxFile(context, inputFile, options);
  }
  if (!module)
    return failure();

  std::string error;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);

  if (emit != Emit::Kiln) {
    Stage stage = emit == Emit::Linalg    ? Stage::Linalg
                  : emit == Emit::Kernels ? Stage::Kernels
                                          : Stage::Object;
    // --emit linalg needs no target: kernel generation is target-independent.
    Target any = target.value_or(Target{Target::Kind::NVPTX, "sm_90"});
    mlir::TimingScope codegenTimer = root.nest("code generation");
    if (failed(runGpuPipeline(*module, any, stage, codegenTimer)))
      return failure();
  }

  if (emit == Emit::PTX || emit == Emit::AMDGCN || emit == Emit::HSACO) {
    FailureOr<std::string> object = kernelObject(*module);
    if (failed(object))
      return failure();
    if (target->isNVPTX() &&
        failed(checkLinked(*object, [&] { return module->emitError(); })))
      return failure();
    if (emit == Emit::HSACO) {
      mlir::TimingScope linkTimer = root.nest("link code object");
      auto linked = linkCodeObject(*object, target->chip,
                                   [&] { return module->emitError(); });
      if (failed(linked))
        return failure();
      object = std::move(*linked);
    }
    output->os() << *object;
  } else {
    mlir::OpPrintingFlags flags;
    if (!printWeights)
      flags.elideLargeElementsAttrs(16).elideLargeResourceString(64).useLocalScope();
    module->print(output->os(), flags);
    output->os() << "\n";
  }
  output->keep();
  return success();
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "kiln: an ahead-of-time compiler for ONNX models\n\n"
      "  kiln compile model.onnx --emit kiln\n"
      "  kiln compile model.onnx --target sm_90 --emit ptx -o model.ptx\n");
  if (compileCommand) {
    return failed(runCompile()) || reportedError ? 1 : 0;
  }
  errs() << "kiln: give a command; see 'kiln --help'\n";
  return 1;
}
