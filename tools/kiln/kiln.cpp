//===- kiln.cpp - the kiln command line -----------------------------------===//
//
//   kiln compile model.onnx --emit kiln
//   kiln compile model.onnx --target sm_90 --emit ptx -o model.ptx
//   kiln compile model.onnx --target gfx942 --emit hsaco -o model.hsaco
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Compiler.h"
#include "compiler/artifact/Writer.h"
#include "compiler/onnx/Importer.h"
#include "compiler/pipeline/Pipeline.h"
#include "codegen/amdgpu/AMDGPU.h"
#include "codegen/gpu/GpuCodegen.h"
#include "codegen/host/Host.h"
#include "codegen/nvptx/NVPTX.h"
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <set>

using namespace llvm;
using namespace kiln;

bool kiln::reportedError = false;

/// Prints diagnostics as "kiln: error: [where: ]message". The importer's
/// messages already name the file and node; other locations are node names.
LogicalResult kiln::printDiagnostic(mlir::Diagnostic &diag) {
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
  // An op's location names its ONNX node, or the nodes fused into it.
  mlir::Location loc = diag.getLocation();
  SmallVector<StringRef> nodes = onnxNodes(loc);
  if (!nodes.empty())
    os << (nodes.size() == 1 ? "node '" : "nodes '") << llvm::join(nodes, "', '") << "': ";
  else if (auto file = dyn_cast<mlir::FileLineColLoc>(loc))
    os << file.getFilename().getValue() << ": ";
  os << diag.str() << "\n";
  for (mlir::Diagnostic &note : diag.getNotes())
    os << "kiln: note: " << note.str() << "\n";
  return success();
}

static mlir::DialectRegistry compilerRegistry() {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  registerCompilerPasses();
  return registry;
}

kiln::CompilerContext::CompilerContext()
    : context(compilerRegistry()), handler(&context, printDiagnostic) {
  // Messages name the node; a dump of the failing op helps no user.
  context.printOpOnDiagnostic(false);
}


namespace {

cl::SubCommand compileCommand("compile", "Compile an ONNX model");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::sub(compileCommand));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::sub(compileCommand));

enum class Emit { Artifact, Kiln, Fused, Dot, Linalg, Kernels, PTX, AMDGCN, HSACO, LLVM, Object, SharedObject };
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce (default: the artifact with -o, else the kiln dialect)"),
    cl::values(clEnumValN(Emit::Artifact, "artifact", "the .kiln artifact the runtime loads"),
               clEnumValN(Emit::Kiln, "kiln", "the imported kiln dialect"),
               clEnumValN(Emit::Fused, "fused", "the kiln dialect after graph optimization"),
               clEnumValN(Emit::Dot, "dot", "a Graphviz graph of the host kernels, coloured by precision"),
               clEnumValN(Emit::Linalg, "linalg", "after the kernel generators (linalg on tensors)"),
               clEnumValN(Emit::Kernels, "kernels", "after GPU kernel formation (gpu.module @kernels)"),
               clEnumValN(Emit::PTX, "ptx", "PTX for an NVIDIA --target"),
               clEnumValN(Emit::AMDGCN, "amdgcn", "AMDGPU assembly for an AMD --target"),
               clEnumValN(Emit::HSACO, "hsaco", "an HSA code object (ELF) for an AMD --target"),
               clEnumValN(Emit::LLVM, "llvm", "optimized LLVM IR of the host code"),
               clEnumValN(Emit::Object, "obj", "an x86-64 object of the host code"),
               clEnumValN(Emit::SharedObject, "so", "the host code as the shared object the runtime loads")),
    cl::sub(compileCommand));
cl::opt<std::string> targetList(
    "target", cl::desc("Comma-separated targets: host, sm_80, sm_90a, gfx90a, gfx942, ..."),
    cl::value_desc("list"), cl::sub(compileCommand));
cl::opt<std::string> hostCPU(
    "host-cpu", cl::desc("The x86-64 CPU host code is tuned for (default: x86-64-v3; native: this machine's)"),
    cl::value_desc("cpu"), cl::init("x86-64-v3"), cl::sub(compileCommand));
cl::list<std::string> inputShapes(
    "input-shape", cl::desc("Fix an input's shape, e.g. input=1x3x224x224 (repeatable)"),
    cl::value_desc("name=shape"), cl::sub(compileCommand));
cl::opt<bool> printWeights("print-weights",
                           cl::desc("Print weights in full instead of eliding them"),
                           cl::sub(compileCommand));
cl::opt<bool> timing("timing", cl::desc("Report the time of each compilation phase"),
                     cl::sub(compileCommand));
cl::opt<bool> noFusion("no-fusion",
                       cl::desc("Skip the graph's fusion passes (for comparison and debugging)"),
                       cl::sub(compileCommand));
cl::opt<std::string> layout(
    "layout",
    cl::desc("The layout convolutions and pooling run in: nchw or nhwc "
             "(default: nhwc on GPUs, nchw on the host)"),
    cl::value_desc("layout"), cl::sub(compileCommand));
cl::opt<std::string> precision(
    "precision",
    cl::desc("The format Conv, Gemm and MatMul read: fp32, tf32, fp16, bf16 or fp8 "
             "(default: tf32 on GPUs, fp32 on the host)"),
    cl::value_desc("format"), cl::sub(compileCommand));
cl::list<std::string> keepFp32(
    "keep-fp32",
    cl::desc("Operator types (Conv, Gemm, MatMul) or parts of node names that stay fp32"),
    cl::value_desc("list"), cl::CommaSeparated, cl::sub(compileCommand));
cl::opt<std::string> calibration(
    "calibration", cl::desc("Activation ranges from kiln calibrate (needed for fp8)"),
    cl::value_desc("scales.json"), cl::sub(compileCommand));
cl::opt<std::string> ptxasPath(
    "ptxas",
    cl::desc("The ptxas that assembles NVIDIA code into cubins for the artifact (default: "
             "found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin; none: PTX only)"),
    cl::value_desc("path"), cl::sub(compileCommand));

/// Says what a long compile is doing, on a terminal only (and not with
/// --timing, whose report says it better).
void progress(const char *phase) {
  if (!timing && errs().is_displayed())
    errs() << "kiln: " << phase << "...\n";
}

/// The plan's kernels as a Graphviz graph: one box per kernel, coloured by
/// the format its product reads, with an edge from each kernel (or model
/// input) to the kernels that read its result.
void printKernelGraph(mlir::ModuleOp module, raw_ostream &os) {
  auto kernels = module->getAttrOfType<mlir::ArrayAttr>(kKernelsAttr);
  auto quote = [](StringRef text) {
    std::string quoted;
    for (char c : text)
      quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return quoted;
  };
  const std::pair<StringRef, StringRef> colours[] = {
      {"fp32", "#e8e8e8"}, {"tf32", "#9ecae1"}, {"fp16", "#a1d99b"},
      {"bf16", "#fdd0a2"}, {"fp8", "#fc9272"}};
  auto colourOf = [&](StringRef precision) {
    for (auto &[name, colour] : colours)
      if (name == precision)
        return colour;
    return StringRef("#ffffff");
  };
  os << "digraph kernels {\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n";
  os << "  legend [shape=plaintext, style=\"\", label=<<table border=\"0\">";
  for (auto &[name, colour] : colours)
    os << "<tr><td bgcolor=\"" << colour << "\">" << name << "</td></tr>";
  os << "</table>>];\n";
  std::set<std::string> modelInputs;
  for (auto [i, entry] : llvm::enumerate(kernels.getAsRange<mlir::DictionaryAttr>())) {
    StringRef precision = entry.getAs<mlir::StringAttr>("precision").getValue();
    SmallVector<StringRef> nodes;
    entry.getAs<mlir::StringAttr>("node").getValue().split(nodes, ", ");
    std::string label = "#" + std::to_string(i) + " " +
                        entry.getAs<mlir::StringAttr>("kind").str() + " (" + precision.str() + ")";
    for (size_t n = 0; n < std::min<size_t>(nodes.size(), 3); ++n)
      label += "\\n" + quote(nodes[n]);
    if (nodes.size() > 3)
      label += "\\n+" + std::to_string(nodes.size() - 3) + " more";
    os << "  k" << i << " [label=\"" << label << "\", fillcolor=\"" << colourOf(precision)
       << "\"];\n";
    for (int64_t from : entry.getAs<mlir::DenseI64ArrayAttr>("after").asArrayRef())
      os << "  k" << from << " -> k" << i << ";\n";
    for (auto input : entry.getAs<mlir::ArrayAttr>("inputs").getAsRange<mlir::StringAttr>()) {
      if (modelInputs.insert(input.str()).second)
        os << "  \"in:" << quote(input) << "\" [shape=ellipse, style=\"\", label=\""
           << quote(input) << "\"];\n";
      os << "  \"in:" << quote(input) << "\" -> k" << i << ";\n";
    }
    StringRef buffer = entry.getAs<mlir::StringAttr>("buffer").getValue();
    if (buffer != "arena")
      os << "  \"out:" << quote(buffer) << "\" [shape=ellipse, style=\"\", label=\""
         << quote(buffer) << "\"];\n  k" << i << " -> \"out:" << quote(buffer) << "\";\n";
  }
  os << "}\n";
}

LogicalResult fail(const Twine &message) {
  WithColor::error(errs(), "kiln") << message << "\n";
  return failure();
}

/// The one target that `--emit` writes code for, of one of `kinds`.
FailureOr<Target> requiredTarget(ArrayRef<Target::Kind> kinds, StringRef what,
                                 StringRef kindName) {
  // Host code needs no --target: the host is the default.
  StringRef list = targetList;
  if (list.empty() && llvm::is_contained(kinds, Target::Kind::Host))
    list = "host";
  if (list.empty())
    return fail(Twine("--emit ") + what + " needs a --target");
  std::string error;
  auto targets = parseTargets(list, hostCPU, error);
  if (failed(targets))
    return fail(error);
  SmallVector<Target> matching;
  for (const Target &target : *targets)
    if (llvm::is_contained(kinds, target.kind))
      matching.push_back(target);
  if (matching.size() != 1)
    return fail(Twine("--emit ") + what + " writes the code of one " + kindName +
                " target; --target names " + Twine(matching.size()));
  return matching.front();
}

GraphOptions graphOptions() {
  GraphOptions graph;
  graph.fuse = !noFusion;
  graph.layout = layout;
  graph.precision = precision;
  graph.keepFp32.assign(keepFp32.begin(), keepFp32.end());
  graph.calibration = calibration;
  return graph;
}

/// Imports the model, timed under `root`.
mlir::OwningOpRef<mlir::ModuleOp> importModel(mlir::MLIRContext &context,
                                              const ImportOptions &options,
                                              mlir::TimingScope &root) {
  progress("importing the model");
  mlir::TimingScope importTimer = root.nest("import ONNX");
  return importOnnxFile(context, inputFile, options);
}

/// Generates one target's code from a copy of the imported module.
LogicalResult compileTarget(mlir::ModuleOp imported, const Target &target, StringRef ptxas,
                            mlir::TimingScope &root, CompiledTarget &compiled) {
  mlir::OwningOpRef<mlir::ModuleOp> module(imported.clone());
  {
    mlir::TimingScope codegenTimer = root.nest("code generation for " + target.chip);
    if (failed(runPipeline(*module, target, Stage::Object, codegenTimer, graphOptions())))
      return failure();
  }
  auto emitError = [&] { return module->emitError(); };
  using Format = CompiledTarget::Format;
  if (target.isHost()) {
    progress("optimizing and compiling the host code with LLVM");
    mlir::TimingScope llvmTimer = root.nest("LLVM");
    FailureOr<std::string> object = compileHostObject(*module, target.chip, nullptr);
    if (succeeded(object))
      object = linkHostCode(*module, *object);
    if (failed(object))
      return failure();
    compiled.name = hostLevel(target.chip);
    compiled.code.emplace_back(Format::HostSharedObject, std::move(*object));
  } else {
    FailureOr<std::string> ptx = kernelObject(*module);
    if (failed(ptx) || failed(checkLinked(*ptx, emitError)))
      return failure();
    compiled.name = target.chip;
    if (!ptxas.empty()) {
      mlir::TimingScope ptxasTimer = root.nest("ptxas for " + target.chip);
      FailureOr<Cubin> cubin = assemblePTX(ptxas, *ptx, target.chip, emitError);
      if (failed(cubin))
        return failure();
      compiled.code.emplace_back(Format::PTX, std::move(*ptx));
      compiled.code.emplace_back(Format::Cubin, std::move(cubin->object));
      compiled.resources = std::move(cubin->kernels);
    } else {
      compiled.code.emplace_back(Format::PTX, std::move(*ptx));
    }
  }
  compiled.planned = module.release();
  return success();
}

/// `kiln compile --emit artifact`: every --target's code in one artifact.
LogicalResult compileArtifact(mlir::MLIRContext &context, const ImportOptions &options) {
  std::string error;
  auto targets = parseTargets(targetList.empty() ? StringRef("host") : StringRef(targetList),
                              hostCPU, error);
  if (failed(targets))
    return fail(error);
  for (const Target &target : *targets)
    if (target.isAMDGPU())
      return fail("--target " + target.chip +
                  ": AMD code cannot go into an artifact yet (the runtime has no HIP device); "
                  "use --emit hsaco");
  std::string ptxas = ptxasPath == "none" ? "" : ptxasPath.empty() ? findPtxas() : ptxasPath;
  if (!ptxas.empty() && !llvm::sys::fs::can_execute(ptxas))
    return fail("--ptxas " + ptxas + ": no such program");

  mlir::DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  mlir::TimingScope root = timingManager.getRootScope();
  mlir::OwningOpRef<mlir::ModuleOp> module = importModel(context, options, root);
  if (!module)
    return failure();
  // The manifest describes @main as imported: read it before code
  // generation rewrites the signature.
  auto signature = readSignature(*module);
  if (failed(signature))
    return failure();

  std::vector<CompiledTarget> compiled(targets->size());
  // The planned modules own their ops; they go when the artifact is written.
  llvm::scope_exit destroy([&] {
    for (CompiledTarget &target : compiled)
      if (target.planned)
        target.planned->erase();
  });
  for (auto [target, result] : llvm::zip(*targets, compiled)) {
    progress(("generating code for " + target.chip).c_str());
    if (failed(compileTarget(*module, target, ptxas, root, result)))
      return failure();
  }
  FailureOr<std::string> bytes = failure();
  {
    mlir::TimingScope writeTimer = root.nest("write artifact");
    bytes = writeArtifact(signature->first, signature->second, compiled);
  }
  if (failed(bytes))
    return failure();
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  output->os() << *bytes;
  output->keep();
  return success();
}

LogicalResult runCompile() {
  CompilerContext compiler;
  mlir::MLIRContext &context = compiler.get();

  ImportOptions options;
  for (const std::string &spec : inputShapes)
    if (std::string error = parseInputShape(spec, options); !error.empty())
      return fail(error);

  // With -o kiln writes the artifact; to a terminal, the IR.
  if (emit.getNumOccurrences() == 0)
    emit = outputFile == "-" ? Emit::Kiln : Emit::Artifact;

  // Validate the target before spending time on the model.
  using Kind = Target::Kind;
  std::optional<Target> target;
  FailureOr<Target> chosen = failure();
  switch (emit) {
  case Emit::Kiln:
  case Emit::Fused:
  case Emit::Linalg:
    break;
  case Emit::Kernels:
    chosen = requiredTarget({Kind::NVPTX, Kind::AMDGPU}, "kernels", "GPU");
    break;
  case Emit::PTX:
    chosen = requiredTarget({Kind::NVPTX}, "ptx", "NVIDIA (sm_*)");
    break;
  case Emit::AMDGCN:
  case Emit::HSACO:
    chosen = requiredTarget({Kind::AMDGPU}, emit == Emit::HSACO ? "hsaco" : "amdgcn",
                            "AMD (gfx*)");
    break;
  case Emit::LLVM:
  case Emit::Object:
  case Emit::SharedObject:
    chosen = requiredTarget({Kind::Host}, emit == Emit::LLVM ? "llvm" : emit == Emit::Object ? "obj" : "so",
                            "host");
    break;
  case Emit::Artifact:
    return compileArtifact(context, options);
  case Emit::Dot:
    chosen = requiredTarget({Kind::Host}, "dot", "host");
    break;
  }
  if (emit != Emit::Kiln && emit != Emit::Fused && emit != Emit::Linalg) {
    if (failed(chosen))
      return failure();
    target = *chosen;
  }

  mlir::DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  mlir::TimingScope root = timingManager.getRootScope();

  mlir::OwningOpRef<mlir::ModuleOp> module = importModel(context, options, root);
  if (!module)
    return failure();
  std::string error;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);

  if (emit != Emit::Kiln) {
    Stage stage = emit == Emit::Fused     ? Stage::Graph
                  : emit == Emit::Linalg  ? Stage::Linalg
                  : emit == Emit::Kernels ? Stage::Kernels
                                          : Stage::Object;
    // --emit fused and linalg need no target: graph optimization and kernel
    // generation are target-independent.
    Target any = target.value_or(Target{Kind::Host, hostCPU});
    progress("generating code");
    mlir::TimingScope codegenTimer = root.nest("code generation");
    if (failed(runPipeline(*module, any, stage, codegenTimer, graphOptions())))
      return failure();
  }

  if (emit == Emit::LLVM || emit == Emit::Object || emit == Emit::SharedObject) {
    std::string llvmIR;
    FailureOr<std::string> object = failure();
    {
      progress("optimizing and compiling the host code with LLVM");
      mlir::TimingScope llvmTimer = root.nest("LLVM");
      object = compileHostObject(*module, target->chip, emit == Emit::LLVM ? &llvmIR : nullptr);
    }
    if (failed(object))
      return failure();
    if (emit == Emit::SharedObject) {
      mlir::TimingScope linkTimer = root.nest("link");
      object = linkHostCode(*module, *object);
      if (failed(object))
        return failure();
    }
    output->os() << (emit == Emit::LLVM ? llvmIR : *object);
    output->keep();
    return success();
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
  } else if (emit == Emit::Dot) {
    printKernelGraph(*module, output->os());
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
      "  kiln compile model.onnx -o model.kiln\n"
      "  kiln run model.kiln --input input=x.npy --output-dir out/\n"
      "  kiln inspect model.kiln\n"
      "  kiln bench model.kiln --iterations 100\n"
      "  kiln calibrate model.onnx --inputs samples/ -o scales.json\n"
      "  kiln compile model.onnx --target host,sm_80,sm_90 -o model.kiln\n"
      "  kiln compile model.onnx --target sm_90 --emit ptx -o model.ptx\n");
  if (compileCommand)
    return failed(runCompile()) || reportedError ? 1 : 0;
  if (kiln::runCommand)
    return kiln::runModel();
  if (kiln::inspectCommand)
    return kiln::inspectModel();
  if (kiln::benchCommand)
    return kiln::benchModel();
  if (kiln::calibrateCommand)
    return kiln::calibrateModel();
  errs() << "kiln: give a command; see 'kiln --help'\n";
  return 1;
}
