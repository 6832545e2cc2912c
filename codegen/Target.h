// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Target.h - what every code generation target provides ----*- C++ -*-===//
//
// A target is a folder (codegen/host, codegen/nvptx, codegen/amdgpu) that
// implements this interface: it checks its chip, says what the chip has and
// which defaults suit it, builds the pipeline from linalg on tensors (the
// kernel generators' output) to its code, and serializes that code for the
// artifact or for --emit. The compiler driver knows targets only through
// this header; codegen/Targets.cpp is the one place that lists them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_TARGET_H
#define KILN_CODEGEN_TARGET_H

#include "dialects/kiln/Layout.h"
#include "dialects/kiln/Precision.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

namespace artifact {
/// The kinds of code an artifact carries, as its schema declares them
/// (runtime/format/artifact.fbs; the generated artifact_generated.h): one
/// name for the compiler and the runtime. Declared opaquely here so that
/// only the files that name a kind include the generated header.
enum class CodeKind : uint8_t;
} // namespace artifact

/// The instructions that multiply tiles of a product on a chip (NVIDIA's
/// tensor cores, AMD's matrix cores), in terms every vendor fills. The
/// instruction shapes are the kernel builders' own choice per format, so
/// they are not described here.
struct MatrixUnit {
  enum class Kind {
    None,
    MmaSync, ///< NVIDIA's warp-level mma.sync (sm_80 on)
    Wgmma,   ///< NVIDIA's warpgroup-level wgmma.mma_async (sm_90a)
    Mfma,    ///< AMD's wavefront-level MFMA (CDNA: gfx90a, gfx940 on)
  };
  Kind kind = Kind::None;
  /// Whether it multiplies tf32 (AMD's xf32) as such; elsewhere tf32
  /// products run as fp32 on it.
  bool tf32 = false;
  /// The E4M3 its fp8 instructions read (FP8, or FP8FNUZ on gfx940 to
  /// gfx942); none where it has no fp8.
  std::optional<Precision> fp8;
};

/// What a chip has that code generation asks about.
struct TargetFeatures {
  MatrixUnit matrixUnit;
  /// Lanes of a warp (NVIDIA, 32) or wavefront (AMD, 64) that row
  /// statistics may split a row across; 0 where rows take no warp (the
  /// host).
  unsigned warpWidth = 0;
};

/// A module attribute the driver sets before serialization: the plan's
/// record (runtime/format/PlanRecord.h), which the code embeds for the
/// loader to check the manifest against.
constexpr llvm::StringLiteral kPlanRecordAttr = "kiln.plan_record";

/// How far a compilation goes, its stages in order. The driver runs the
/// graph stages; a target builds code generation from Linalg on, to
/// Kernels (GPU targets) or Object.
enum class Stage {
  Imported, ///< the kiln dialect as imported
  Graph,    ///< kiln ops after graph optimization
  Linalg,   ///< kiln ops lowered to linalg on tensors
  Kernels,  ///< GPU: bufferized, mapped and outlined into gpu.module @kernels
  Object,   ///< lowered as far as the target's serializer starts: host, the
            ///< LLVM dialect with the entry point; GPU, gpu.binary
};

/// A format `kiln compile --emit` writes, declared by the target family
/// that writes it (or by the driver, for its own stages): the CLI lists
/// these and nothing else.
struct EmitFormat {
  llvm::StringLiteral name;        ///< as --emit takes it: "ptx"
  llvm::StringLiteral description; ///< for --help
  /// The stage it is written from. Before Object the module is printed
  /// there; at Object a target's format is what Target::emit writes.
  Stage stage;
};

/// An option of one target family's own (NVIDIA's ptxas), which `kiln
/// compile` takes as --NAME without the CLI knowing the family.
struct TargetOption {
  llvm::StringLiteral name;        ///< "ptxas"
  llvm::StringLiteral valueName;   ///< "path"
  llvm::StringLiteral description; ///< for --help
};

/// Settings of code generation that are the user's, not the chip's.
struct CodegenOptions {
  /// Run the fusion passes: in the graph (batch norms into convolutions,
  /// decomposed layer norms and GELUs made whole, elementwise chains) and,
  /// on the host, the kernels around each product into its register tiles
  /// (GPU products always take their neighbours in). Off, the graph is only
  /// folded.
  bool fuse = true;
  /// The values given for the families' own options (targetOptions()), by
  /// name; the family reads its own and documents what absence means.
  llvm::StringMap<std::string> targetOptions;
};

/// What ptxas (or a code object's metadata) says a GPU kernel uses.
struct KernelResources {
  unsigned registers = 0;       ///< per thread (AMD: VGPRs per lane)
  unsigned sharedBytes = 0;     ///< static shared memory (AMD: LDS)
  unsigned spillBytes = 0;      ///< NVIDIA: spill stores and loads
  unsigned scalarRegisters = 0; ///< AMD: SGPRs per wave
  unsigned scratchBytes = 0;    ///< AMD: private memory per lane
};

/// A piece of code an artifact carries.
struct CodeObject {
  artifact::CodeKind kind;
  std::string bytes;
};

/// One target's code, as the artifact records it.
struct TargetCode {
  std::string name; ///< the processor the code needs: x86-64-v3, sm_90, ...
  std::vector<CodeObject> code;
  /// Per GPU kernel name, where an assembler reported it.
  llvm::StringMap<KernelResources> resources;
};

/// One chip of one target.
class Target {
public:
  virtual ~Target();

  /// The chip as LLVM names it: x86-64-v3, sm_90a, gfx942, ...
  llvm::StringRef chip() const { return chipName; }
  /// The processor the code needs, as the artifact records it: the chip,
  /// or for the host the x86-64 level the chip has.
  virtual std::string codeTarget() const { return chipName; }
  /// The family, as the CLI's messages name it: "host", "NVIDIA (sm_*)".
  virtual llvm::StringRef family() const = 0;
  virtual TargetFeatures features() const = 0;
  /// The format products read unless the user says otherwise.
  virtual Precision defaultPrecision() const = 0;
  /// What `--precision fp8` means on the chip: the E4M3 its matrix unit
  /// reads (FP8FNUZ on AMD's CDNA3), FP8 where it reads none.
  Precision fp8Format() const { return features().matrixUnit.fp8.value_or(Precision::FP8); }
  /// The layout convolutions and pooling run in unless the user says
  /// otherwise.
  virtual Layout defaultLayout() const = 0;
  /// Fails with why the target's code cannot go into an artifact with
  /// `options`. Asked before any work is done.
  virtual llvm::Error checkInArtifact(const CodegenOptions &options) const {
    return llvm::Error::success();
  }

  /// Appends code generation from linalg on tensors to `stage` (Kernels
  /// or Object) to `pm`.
  virtual llvm::LogicalResult buildPipeline(mlir::OpPassManager &pm, Stage stage,
                                            const CodegenOptions &options,
                                            llvm::raw_ostream &errors) const = 0;
  /// What must follow the pass manager's run to reach Stage::Object (the
  /// host's entry point is added to the lowered module).
  virtual llvm::LogicalResult finishObject(mlir::ModuleOp module) const { return llvm::success(); }
  /// The code the artifact carries, from a module at Stage::Object.
  virtual llvm::FailureOr<TargetCode> serialize(mlir::ModuleOp module,
                                                const CodegenOptions &options,
                                                mlir::TimingScope &timing) const = 0;

  /// Writes `format`, one of the family's --emit formats (see `emits`) of
  /// Stage::Object, from a module at that stage.
  virtual llvm::FailureOr<std::string> emit(mlir::ModuleOp module, llvm::StringRef format,
                                            mlir::TimingScope &timing) const = 0;

protected:
  explicit Target(std::string chip) : chipName(std::move(chip)) {}

private:
  std::string chipName;
};

/// Makes the target `name` names (one --target entry: "host", "sm_90a",
/// "gfx942"); `host` is the x86-64 CPU `hostCPU`. Fails with a message
/// naming the entry and the accepted forms.
llvm::Expected<std::unique_ptr<Target>> parseTarget(llvm::StringRef name, llvm::StringRef hostCPU);

/// The x86-64 levels host code is compiled for when no CPU is named, best
/// first: an artifact carries a plan for each, and the runtime runs the
/// best one the CPU has (as onnxruntime picks its kernels' instruction set
/// at run time). Outputs of one target's code take the last.
llvm::ArrayRef<llvm::StringLiteral> portableHostCPUs();

/// The targets one --target entry makes for an artifact: one, but `host`
/// with no `hostCPU` makes one per level of portableHostCPUs(). Fails as
/// parseTarget does.
llvm::Expected<llvm::SmallVector<std::unique_ptr<Target>>>
parseArtifactTargets(llvm::StringRef name, llvm::StringRef hostCPU);

/// Whether `target` writes --emit `format`: "kernels" (the module at
/// Stage::Kernels, which the driver prints) or a format of its own that
/// `Target::emit` writes ("ptx", "hsaco", "so", ...).
bool emits(const Target &target, llvm::StringRef format);

/// Every target family's --emit formats, each name once, in the order of
/// the families and their lists.
llvm::SmallVector<EmitFormat> targetEmitFormats();

/// Every target family's own options, in the order of the families.
llvm::SmallVector<TargetOption> targetOptions();

/// The families whose targets write --emit `format`, as "NVIDIA (sm_*)";
/// empty when none does.
std::string familiesEmitting(llvm::StringRef format);

/// Registers code generation's passes: the shared ones (codegen/common,
/// kernels, gpu) and every target's, for pipelines and kiln-opt.
void registerTargetPasses();

} // namespace kiln

#endif // KILN_CODEGEN_TARGET_H
