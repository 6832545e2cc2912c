// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- AMDGPU.cpp - kernels to HSA code objects for AMD GPUs --------------===//

#include "codegen/amdgpu/AMDGPU.h"

#include "codegen/Toolchain.h"

#include "runtime/format/format.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>

namespace kiln {

namespace {
constexpr llvm::StringLiteral kTriple = "amdgcn-amd-amdhsa";

/// The kernels an HSA code object's metadata (MessagePack) lists, and what
/// each uses.
llvm::FailureOr<llvm::StringMap<KernelResources>>
parseMetadata(llvm::StringRef blob, llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  llvm::msgpack::Document document;
  if (!document.readFromBlob(blob, /*Multi=*/false))
    return emitError() << "the code object's metadata note is not MessagePack";
  llvm::msgpack::DocNode &root = document.getRoot();
  llvm::msgpack::DocNode listKey = document.getNode("amdhsa.kernels");
  if (!root.isMap() || root.getMap().find(listKey) == root.getMap().end() ||
      !root.getMap()[listKey].isArray())
    return emitError() << "the code object's metadata lists no kernels";
  llvm::StringMap<KernelResources> kernels;
  for (llvm::msgpack::DocNode &kernel : root.getMap()[listKey].getArray()) {
    if (!kernel.isMap())
      continue;
    llvm::msgpack::MapDocNode &fields = kernel.getMap();
    auto number = [&](llvm::StringRef key) -> unsigned {
      auto found = fields.find(document.getNode(key));
      if (found == fields.end())
        return 0;
      const llvm::msgpack::DocNode &value = found->second;
      return value.getKind() == llvm::msgpack::Type::UInt  ? unsigned(value.getUInt())
             : value.getKind() == llvm::msgpack::Type::Int ? unsigned(value.getInt())
                                                           : 0;
    };
    auto name = fields.find(document.getNode(".name"));
    if (name == fields.end() || !name->second.isString())
      continue;
    KernelResources &used = kernels[name->second.getString()];
    used.registers = number(".vgpr_count");
    used.scalarRegisters = number(".sgpr_count");
    used.sharedBytes = number(".group_segment_fixed_size");
    used.scratchBytes = number(".private_segment_fixed_size");
  }
  return kernels;
}
} // namespace

bool isKnownAMDGPUChip(llvm::StringRef chip) {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTargetMC();
  return isKnownChip(kTriple, chip);
}

std::string findDeviceLibraries() {
  llvm::SmallVector<std::string> roots;
  if (const char *value = std::getenv("ROCM_PATH"))
    roots.push_back(value);
  roots.append({"/opt/rocm", "/usr/lib/x86_64-linux-gnu", "/usr/lib"});
  for (const std::string &root : roots) {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, "amdgcn", "bitcode", "ocml.bc");
    if (llvm::sys::fs::exists(path))
      return root;
  }
  return "";
}

llvm::LogicalResult buildAMDGPUPipeline(mlir::OpPassManager &pm, llvm::StringRef chip,
                                        llvm::raw_ostream &errors) {
  // Math functions come from the device libraries (ocml, ockl), which the
  // serializer finds under <toolkit>/amdgcn/bitcode. Conversions to 8-bit
  // floats become the chip's packed instructions (arith-to-amdgpu), whose
  // pairs vector-to-llvm puts together.
  std::string toolkit = findDeviceLibraries();
  std::string toolkitOption = toolkit.empty() ? "" : " toolkit=" + toolkit;
  return mlir::parsePassPipeline(llvm::formatv("rocdl-attach-target{{chip={0} O=3},"
                                               "gpu.module(lower-affine,convert-scf-to-cf,"
                                               "convert-arith-to-amdgpu{{chipset={0}},"
                                               "convert-vector-to-llvm,"
                                               "convert-gpu-to-rocdl{{chipset={0}},"
                                               "reconcile-unrealized-casts,canonicalize,cse),"
                                               "gpu-module-to-binary{{format=isa{1}}",
                                               chip, toolkitOption)
                                     .str(),
                                 pm, errors);
}

llvm::FailureOr<std::string>
linkCodeObject(llvm::StringRef assembly, llvm::StringRef chip,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  auto object = mlir::ROCDL::assembleIsa(assembly, kTriple, chip, "", emitError);
  if (failed(object))
    return llvm::failure();
  return linkSharedObject({std::string(object->begin(), object->end())}, {}, emitError);
}

void appendPlanRecord(std::string &assembly, llvm::StringRef record) {
  // Read-only data the code never touches; visible, so that the loader
  // finds it by name.
  assembly += "\n; What this code was compiled for (runtime/format/PlanRecord.h).\n"
              "\t.type " KILN_PLAN_RECORD_SYMBOL ",@object\n"
              "\t.section .rodata,\"a\",@progbits\n"
              "\t.globl " KILN_PLAN_RECORD_SYMBOL "\n"
              "\t.protected " KILN_PLAN_RECORD_SYMBOL "\n" KILN_PLAN_RECORD_SYMBOL ":\n";
  for (size_t start = 0; start < record.size(); start += 64) {
    assembly += "\t.byte ";
    for (char c : record.substr(start, 64))
      assembly += std::to_string(unsigned(uint8_t(c))) + ",";
    assembly.back() = '\n';
  }
  assembly +=
      "\t.byte 0\n\t.size " KILN_PLAN_RECORD_SYMBOL ", " + std::to_string(record.size() + 1) + "\n";
}

llvm::FailureOr<llvm::StringMap<KernelResources>>
readKernelResources(llvm::StringRef codeObject,
                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  auto elf = llvm::object::ELF64LEFile::create(codeObject);
  if (!elf)
    return emitError() << "the code object is not an ELF file: " << llvm::toString(elf.takeError());
  auto sections = elf->sections();
  if (!sections)
    return emitError() << "the code object's sections: " << llvm::toString(sections.takeError());
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    std::optional<llvm::StringRef> metadata;
    llvm::Error error = llvm::Error::success();
    for (const auto &note : elf->notes(section, error))
      if (note.getName() == "AMDGPU" && note.getType() == llvm::ELF::NT_AMDGPU_METADATA)
        metadata = llvm::toStringRef(note.getDesc(section.sh_addralign));
    if (error)
      return emitError() << "the code object's notes: " << llvm::toString(std::move(error));
    if (metadata)
      return parseMetadata(*metadata, emitError);
  }
  return emitError() << "the code object has no AMDGPU metadata note";
}

} // namespace kiln
