// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Targets.cpp - the one list of kiln's targets -----------------------===//
//
// Adding a target: a folder under codegen/ with a Target implementation, its
// --emit formats and its passes, and one entry in kFamilies
// (docs/architecture.md walks through it).
//
//===----------------------------------------------------------------------===//

#include "codegen/Target.h"

#include "codegen/amdgpu/AMDGPU.h"
#include "codegen/amdgpu/Passes.h"
#include "codegen/common/Passes.h"
#include "codegen/gpu/Passes.h"
#include "codegen/host/Host.h"
#include "codegen/host/Passes.h"
#include "codegen/kernels/Passes.h"
#include "codegen/nvptx/NVPTX.h"
#include "codegen/nvptx/Passes.h"

#include "llvm/ADT/StringExtras.h"

namespace kiln {

Target::~Target() = default;

namespace {

struct Family {
  llvm::StringLiteral name;
  llvm::ArrayRef<EmitFormat> (*emitFormats)();
  /// The family's target for a --target entry; null when the entry is not
  /// the family's, an error when it is but is wrong.
  llvm::Expected<std::unique_ptr<Target>> (*create)(llvm::StringRef name, llvm::StringRef hostCPU);
  /// Registers the family's passes (its Passes.td), for kiln-opt.
  void (*registerPasses)();
  /// The family's own options; null when it has none.
  llvm::ArrayRef<TargetOption> (*options)() = nullptr;
};

const Family kFamilies[] = {
    {kHostFamily, hostEmitFormats, createHostTarget, registerKilnHostPasses},
    {kNVPTXFamily, nvptxEmitFormats, createNVPTXTarget, registerKilnNVPTXPasses, nvptxOptions},
    {kAMDGPUFamily, amdgpuEmitFormats, createAMDGPUTarget, registerKilnAMDGPUPasses},
};

} // namespace

llvm::Expected<std::unique_ptr<Target>> parseTarget(llvm::StringRef name, llvm::StringRef hostCPU) {
  for (const Family &family : kFamilies) {
    llvm::Expected<std::unique_ptr<Target>> target = family.create(name, hostCPU);
    if (!target || *target)
      return target;
  }
  return llvm::createStringError(
      "unknown target '" + name +
      "': expected host, an NVIDIA architecture such as sm_80 or sm_90a, or an AMD one "
      "such as gfx90a or gfx942");
}

llvm::ArrayRef<llvm::StringLiteral> portableHostCPUs() {
  static constexpr llvm::StringLiteral kLevels[] = {"x86-64-v4", "x86-64-v3"};
  return kLevels;
}

llvm::Expected<llvm::SmallVector<std::unique_ptr<Target>>>
parseArtifactTargets(llvm::StringRef name, llvm::StringRef hostCPU) {
  llvm::SmallVector<llvm::StringRef> cpus = {hostCPU};
  if (hostCPU.empty() && name == kHostFamily)
    cpus.assign(portableHostCPUs().begin(), portableHostCPUs().end());
  llvm::SmallVector<std::unique_ptr<Target>> result;
  for (llvm::StringRef cpu : cpus) {
    llvm::Expected<std::unique_ptr<Target>> target = parseTarget(name, cpu);
    if (!target)
      return target.takeError();
    result.push_back(std::move(*target));
  }
  return result;
}

namespace {

bool writes(const Family &family, llvm::StringRef format) {
  return llvm::any_of(family.emitFormats(),
                      [&](const EmitFormat &each) { return each.name == format; });
}

} // namespace

bool emits(const Target &target, llvm::StringRef format) {
  for (const Family &family : kFamilies)
    if (family.name == target.family())
      return writes(family, format);
  return false;
}

std::string familiesEmitting(llvm::StringRef format) {
  llvm::SmallVector<llvm::StringRef> names;
  for (const Family &family : kFamilies)
    if (writes(family, format))
      names.push_back(family.name);
  return llvm::join(names, " or ");
}

llvm::SmallVector<EmitFormat> targetEmitFormats() {
  llvm::SmallVector<EmitFormat> formats;
  for (const Family &family : kFamilies)
    for (const EmitFormat &format : family.emitFormats())
      if (llvm::none_of(formats, [&](const EmitFormat &seen) { return seen.name == format.name; }))
        formats.push_back(format);
  return formats;
}

llvm::SmallVector<TargetOption> targetOptions() {
  llvm::SmallVector<TargetOption> options;
  for (const Family &family : kFamilies)
    if (family.options)
      llvm::append_range(options, family.options());
  return options;
}

void registerTargetPasses() {
  registerKilnCommonPasses();
  registerKilnKernelsPasses();
  registerKilnGpuPasses();
  for (const Family &family : kFamilies)
    family.registerPasses();
}

} // namespace kiln
