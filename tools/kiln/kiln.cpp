// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- kiln.cpp - the kiln command line -----------------------------------===//
//
//   kiln compile model.onnx --emit kiln
//   kiln compile model.onnx --target sm_90 --emit ptx -o model.ptx
//   kiln compile model.onnx --target gfx942 --emit hsaco -o model.hsaco
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Compiler.h"
#include "Npy.h"
#include "codegen/Target.h"
#include "compiler/artifact/Signing.h"
#include "compiler/driver/Driver.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

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

llvm::Error kiln::parseInputValue(StringRef spec, ImportOptions &options) {
  auto [name, path] = spec.split('=');
  if (name.empty() || path.empty())
    return createStringError("--input-value wants NAME=FILE.npy, got '" + spec + "'");
  NpyArray array;
  if (std::string error = readNpy(path.str(), array); !error.empty())
    return createStringError("--input-value " + name + ": " + error);
  options.inputValues[name] = {kiln_dtype_name(array.dtype), std::move(array.shape),
                               std::move(array.data)};
  return Error::success();
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

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"), cl::Required,
                               cl::sub(compileCommand));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"), cl::sub(compileCommand));

/// --emit's values: the driver's formats and every target family's own,
/// as the driver lists them (an index into emitChoices()).
const llvm::SmallVector<EmitFormat> &emitChoices() {
  static const llvm::SmallVector<EmitFormat> formats = emitFormats();
  return formats;
}
enum class EmitChoice : unsigned {};
cl::opt<EmitChoice>
    emit("emit", cl::desc("What to produce (default: the artifact with -o, else the kiln dialect)"),
         cl::sub(compileCommand));
cl::opt<std::string>
    targetList("target",
               cl::desc("Comma-separated targets: host, sm_80, sm_90a, gfx90a, gfx942, ..."),
               cl::value_desc("list"), cl::sub(compileCommand));
cl::opt<std::string> hostCPU(
    "host-cpu",
    cl::desc("The x86-64 CPU host code is tuned for (native: this machine's; default: plans for "
             "x86-64-v4 and x86-64-v3 in an artifact, the runtime running the best the CPU has, "
             "and x86-64-v3 for --emit llvm, obj or so)"),
    cl::value_desc("cpu"), cl::sub(compileCommand));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("An input's shape: sizes fix it (input=1x3x224x224), MIN..MAX makes a dimension "
             "symbolic, @ gives the sizes to tune for (ids=1..8x1..512@1x128); repeatable"),
    cl::value_desc("name=shape"), cl::sub(compileCommand));
cl::list<std::string> inputValues(
    "input-value",
    cl::desc("Fix a graph input's value (a shape, axes or sizes that kiln must know) to the "
             "array in a .npy file; the input leaves the compiled signature (repeatable)"),
    cl::value_desc("name=file.npy"), cl::sub(compileCommand));
cl::opt<bool> printWeights("print-weights",
                           cl::desc("Print weights in full instead of eliding them"),
                           cl::sub(compileCommand));
cl::opt<bool> timing("timing", cl::desc("Report the time of each compilation phase"),
                     cl::sub(compileCommand));
cl::opt<bool> noFusion("no-fusion",
                       cl::desc("Skip the graph's fusion passes (for comparison and debugging)"),
                       cl::sub(compileCommand));
cl::opt<std::string> layout("layout",
                            cl::desc("The layout convolutions and pooling run in: nchw or nhwc "
                                     "(default: nhwc on GPUs, nchw on the host)"),
                            cl::value_desc("layout"), cl::sub(compileCommand));
cl::opt<std::string>
    precision("precision",
              cl::desc("The format Conv, Gemm and MatMul read: fp32, tf32, fp16, bf16, fp8 (the "
                       "target's E4M3) or fp8-fnuz (default: tf32 on GPUs, fp32 on the host)"),
              cl::value_desc("format"), cl::sub(compileCommand));
cl::list<std::string>
    keepFp32("keep-fp32",
             cl::desc("Operator types (Conv, Gemm, MatMul) or parts of node names that stay fp32"),
             cl::value_desc("list"), cl::CommaSeparated, cl::sub(compileCommand));
cl::opt<std::string> calibration("calibration",
                                 cl::desc("Activation ranges from kiln calibrate (needed for fp8)"),
                                 cl::value_desc("scales.json"), cl::sub(compileCommand));
cl::opt<std::string> signingKey("sign",
                                cl::desc("Sign the artifact with this Ed25519 private key (PEM)"),
                                cl::value_desc("key.pem"), cl::sub(compileCommand));

/// The target families' own options (--ptxas), made as kiln starts from
/// what the families declare.
std::vector<std::unique_ptr<cl::opt<std::string>>> &targetFlags() {
  static std::vector<std::unique_ptr<cl::opt<std::string>>> flags;
  return flags;
}

/// Says what a long compile is doing, on a terminal only (and not with
/// --timing, whose report says it better).
void progress(StringRef phase) {
  if (!timing && errs().is_displayed())
    errs() << "kiln: " << phase << "...\n";
}

LogicalResult fail(const Twine &message) {
  WithColor::error(errs(), "kiln") << message << "\n";
  return failure();
}

/// The command line's options as the compiler driver takes them.
FailureOr<CompileOptions> compileOptions() {
  CompileOptions options;
  for (const std::string &spec : inputShapes)
    if (Error error = parseInputShape(spec, options.import))
      return fail(toString(std::move(error)));
  for (const std::string &spec : inputValues)
    if (Error error = parseInputValue(spec, options.import))
      return fail(toString(std::move(error)));
  if (targetList.getNumOccurrences()) {
    SmallVector<StringRef> names;
    StringRef(targetList).split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (StringRef name : names)
      if (!name.trim().empty())
        options.targets.push_back(name.trim().str());
    if (options.targets.empty())
      return fail("--target names no target");
  }
  options.hostCPU = hostCPU;
  if (!layout.empty()) {
    options.graph.layout = parseLayout(layout);
    if (!options.graph.layout)
      return fail("unknown layout '" + layout + "': expected nchw or nhwc");
  }
  if (!precision.empty()) {
    options.graph.precision = parsePrecision(precision);
    if (!options.graph.precision)
      return fail("unknown precision '" + precision +
                  "': expected fp32, tf32, fp16, bf16, fp8 or fp8-fnuz");
  }
  options.graph.keepFp32.assign(keepFp32.begin(), keepFp32.end());
  options.graph.calibration = calibration;
  options.codegen.fuse = !noFusion;
  for (const std::unique_ptr<cl::opt<std::string>> &flag : targetFlags())
    if (flag->getNumOccurrences())
      options.codegen.targetOptions[flag->ArgStr] = flag->getValue();
  // With -o kiln writes the artifact; to a terminal, the IR.
  options.emit = emit.getNumOccurrences() ? emitChoices()[unsigned(emit.getValue())].name.str()
                 : outputFile == "-"      ? "kiln"
                                          : "artifact";
  options.printWeights = printWeights;
  options.timing = timing;
  options.progress = progress;
  return options;
}

LogicalResult runCompile() {
  FailureOr<CompileOptions> options = compileOptions();
  if (failed(options))
    return failure();
  CompilerContext compiler;
  if (!signingKey.empty() && options->emit != "artifact")
    return fail("--sign signs artifacts, and --emit asks for something else");
  FailureOr<std::string> bytes = compileModel(compiler.get(), inputFile, *options);
  if (failed(bytes))
    return failure();
  if (!signingKey.empty())
    if (Error error = signArtifact(*bytes, signingKey))
      return fail("--sign: " + toString(std::move(error)));
  std::string error;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  output->os() << *bytes;
  output->keep();
  return success();
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  for (auto [index, format] : llvm::enumerate(emitChoices()))
    emit.getParser().addLiteralOption(format.name, EmitChoice(index), format.description);
  for (const TargetOption &option : targetOptions())
    targetFlags().push_back(std::make_unique<cl::opt<std::string>>(
        StringRef(option.name), cl::desc(option.description), cl::value_desc(option.valueName),
        cl::sub(compileCommand)));
  cl::ParseCommandLineOptions(argc, argv,
                              "kiln: an ahead-of-time compiler for ONNX models\n\n"
                              "  kiln compile model.onnx --emit kiln\n"
                              "  kiln compile model.onnx -o model.kiln\n"
                              "  kiln run model.kiln --input input=x.npy --output-dir out/\n"
                              "  kiln inspect model.kiln\n"
                              "  kiln bench model.kiln --iterations 100\n"
                              "  kiln sign model.kiln --key signing.pem\n"
                              "  kiln verify model.kiln --trusted-key signing.pub.pem\n"
                              "  kiln calibrate model.onnx --inputs samples/ -o scales.json\n"
                              "  kiln compile model.onnx --target host,sm_80,sm_90 -o model.kiln\n"
                              "  kiln compile model.onnx --target sm_90 --emit ptx -o model.ptx\n");
  // Every error is reported where it is found; an exception reaching here
  // is a bug, still reported as an error rather than an abort.
  try {
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
    if (kiln::signCommand)
      return kiln::signModel();
    if (kiln::verifyCommand)
      return kiln::verifyModel();
  } catch (const std::exception &error) {
    return reportError(Twine("internal error: ") + error.what());
  } catch (...) {
    return reportError("internal error: an unknown exception");
  }
  errs() << "kiln: give a command; see 'kiln --help'\n";
  return 1;
}
