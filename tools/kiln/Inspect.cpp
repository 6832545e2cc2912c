// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Inspect.cpp - kiln inspect and kiln bench --------------------------===//

#include "Commands.h"
#include "Peak.h"

#include "compiler/artifact/Signing.h"
#include "kiln/runtime.h"
#include "runtime/format/DimProgram.h"
#include "runtime/format/artifact_generated.h"
#include "runtime/format/format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

using namespace llvm;

namespace kiln {

cl::SubCommand inspectCommand("inspect", "Describe a compiled model");
cl::SubCommand benchCommand("bench", "Time a compiled model's runs");

namespace {

cl::opt<std::string> inspectFile(cl::Positional, cl::desc("<model.kiln>"), cl::Required,
                                 cl::sub(inspectCommand));
cl::opt<bool> inspectJson("json", cl::desc("Describe the model as JSON, for programs"),
                          cl::sub(inspectCommand));
cl::opt<std::string> benchFile(cl::Positional, cl::desc("<model.kiln>"), cl::Required,
                               cl::sub(benchCommand));
cl::opt<unsigned> warmup("warmup", cl::desc("Runs before timing"), cl::init(3),
                         cl::sub(benchCommand));
cl::opt<unsigned> iterations("iterations", cl::desc("Timed runs"), cl::init(20),
                             cl::sub(benchCommand));
cl::opt<std::string> benchDevice("device", cl::desc("Where to run: host, cuda:N or hip:N"),
                                 cl::init("host"), cl::sub(benchCommand));
cl::opt<bool>
    benchNoCudaGraph("no-cuda-graph",
                     cl::desc("On a GPU, launch kernel by kernel instead of as one CUDA graph"),
                     cl::sub(benchCommand));
cl::opt<unsigned> benchThreads("threads", cl::desc("Threads to run on (0: one per CPU)"),
                               cl::init(0), cl::sub(benchCommand));
cl::list<std::string>
    benchSizes("size",
               cl::desc("A symbol's value, SYMBOL=N, for a model with symbolic dimensions "
                        "(default: the value its code is tuned for; repeatable)"),
               cl::value_desc("SYMBOL=N"), cl::sub(benchCommand));
cl::opt<bool> benchProfile(
    "profile",
    cl::desc("Time each kernel and list them, slowest first (on a GPU, launched one by one)"),
    cl::sub(benchCommand));

std::string text(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

/// The format a kernel's product reads or it rounds to.
std::string precisionOf(const artifact::Kernel *kernel) {
  return kernel->precision() ? text(kernel->precision()) : "fp32";
}

/// The operands a GPU kernel copies with TMA: its tensor-map arguments.
int64_t tensorMapsOf(const artifact::Launch *launch) {
  return llvm::count_if(*launch->args(),
                        [](const artifact::LaunchArg *arg) { return arg->tensor_map(); });
}

/// Whether plan `plan` runs on AMD GPUs: its launches then report VGPRs,
/// SGPRs, LDS and scratch.
/// The manifest's symbols' names, as dimension programs number them.
std::vector<std::string_view> symbolNames(const artifact::Model *manifest) {
  std::vector<std::string_view> names;
  if (manifest->symbols())
    for (const artifact::Symbol *symbol : *manifest->symbols())
      names.push_back(symbol->name()->string_view());
  return names;
}

/// A grid dimension that a run gives, as its expression of the symbols;
/// empty for a constant one.
std::string gridDim(const artifact::Launch *launch, size_t d,
                    const std::vector<std::string_view> &names) {
  if (!launch->grid_dims() || d >= launch->grid_dims()->size())
    return std::string();
  const flatbuffers::Vector<int64_t> *program = launch->grid_dims()->Get(d)->program();
  format::DimProgram dim{program->data(), program->size()};
  if (program->size() == 2 && program->Get(0) == int64_t(format::DimOp::Constant))
    return std::string();
  return format::dimText(dim, names);
}

bool isAMDPlan(const artifact::Model *manifest, flatbuffers::uoffset_t plan) {
  return llvm::any_of(*manifest->code(), [&](const artifact::Code *code) {
    return code->plan() == plan && code->kind() == artifact::CodeKind::HSACO;
  });
}

std::string bytes(uint64_t count) {
  std::string text;
  raw_string_ostream os(text);
  if (count >= (1u << 20))
    os << llvm::format("%.1f MiB", double(count) / (1 << 20));
  else if (count >= (1u << 10))
    os << llvm::format("%.1f KiB", double(count) / (1 << 10));
  else
    os << count << " B";
  return text;
}

/// Whether the artifact carries a signature (which loading verified).
bool isSigned(const kiln_file_header_t &header) {
  return llvm::any_of(header.signer, [](uint8_t byte) { return byte != 0; });
}

/// A tensor's name, dtype, shape (-1 where symbolic) and size (at the
/// symbols' largest values); a symbolic one's dimensions, each a size or
/// an expression of the symbols.
json::Object tensorJson(const kiln_model_t *model, size_t index, const kiln_tensor_info_t &info,
                        bool output) {
  json::Object tensor{{"name", info.name},
                      {"dtype", kiln_dtype_name(info.dtype)},
                      {"shape", json::Array(ArrayRef<int64_t>(info.shape, info.rank))},
                      {"bytes", int64_t(info.byte_size)}};
  if (llvm::is_contained(ArrayRef<int64_t>(info.shape, info.rank), -1)) {
    json::Array dims;
    for (size_t d = 0; d < info.rank; ++d) {
      const char *dim =
          output ? kiln_model_output_dim(model, index, d) : kiln_model_input_dim(model, index, d);
      dims.push_back(dim ? json::Value(dim) : json::Value(info.shape[d]));
    }
    tensor["dims"] = std::move(dims);
  }
  return tensor;
}

/// What `kiln inspect` lists, as JSON: the inputs and outputs, each plan
/// with the targets whose code runs it and its kernels, and the sections.
json::Value modelJson(kiln_model_t *model, const kiln_file_header_t &header,
                      const artifact::Model *manifest) {
  json::Array inputs, outputs, plans, code;
  kiln_tensor_info_t info;
  for (size_t i = 0; i < kiln_model_input_count(model); ++i) {
    kiln_status_free(kiln_model_input_info(model, i, &info));
    inputs.push_back(tensorJson(model, i, info, false));
  }
  for (size_t i = 0; i < kiln_model_output_count(model); ++i) {
    kiln_status_free(kiln_model_output_info(model, i, &info));
    outputs.push_back(tensorJson(model, i, info, true));
  }
  json::Array symbols;
  for (size_t i = 0; i < kiln_model_symbol_count(model); ++i) {
    kiln_symbol_info_t symbol;
    kiln_status_free(kiln_model_symbol_info(model, i, &symbol));
    symbols.push_back(json::Object{
        {"name", symbol.name}, {"min", symbol.min}, {"max", symbol.max}, {"opt", symbol.opt}});
  }
  std::vector<std::string_view> names = symbolNames(manifest);
  for (flatbuffers::uoffset_t p = 0; p < manifest->plans()->size(); ++p) {
    const artifact::Plan *plan = manifest->plans()->Get(p);
    json::Array targets, kernels;
    for (const artifact::Code *section : *manifest->code())
      if (section->plan() == p && !llvm::is_contained(targets, section->target()->str()))
        targets.push_back(section->target()->str());
    bool amd = isAMDPlan(manifest, p);
    if (plan->kernels())
      for (const artifact::Kernel *kernel : *plan->kernels()) {
        json::Object entry{{"kind", text(kernel->kind())},
                           {"precision", precisionOf(kernel)},
                           {"nodes", text(kernel->node())}};
        if (std::string layout = text(kernel->layout()); !layout.empty())
          entry["layout"] = layout;
        if (kernel->flops())
          entry["flops"] = int64_t(kernel->flops());
        if (kernel->sizes_only())
          entry["sizes_only"] = true;
        if (const artifact::Launch *launch = kernel->launch()) {
          entry["kernel"] = text(launch->kernel());
          json::Array grid;
          for (size_t d = 0; d < launch->grid()->size(); ++d)
            if (std::string dim = gridDim(launch, d, names); !dim.empty())
              grid.push_back(dim);
            else
              grid.push_back(launch->grid()->Get(d));
          entry["grid"] = std::move(grid);
          entry["block"] =
              json::Array(ArrayRef<uint32_t>(launch->block()->data(), launch->block()->size()));
          entry["registers"] = int64_t(launch->registers());
          entry["shared_bytes"] =
              int64_t(launch->shared_bytes()) + int64_t(launch->static_shared_bytes());
          if (amd) {
            entry["scalar_registers"] = int64_t(launch->scalar_registers());
            entry["scratch_bytes"] = int64_t(launch->scratch_bytes());
          } else {
            entry["spill_bytes"] = int64_t(launch->spill_bytes());
          }
          entry["tensor_maps"] = tensorMapsOf(launch);
        } else {
          entry["buffer"] = text(kernel->buffer());
          entry["offset"] = int64_t(kernel->offset());
          entry["bytes"] = int64_t(kernel->bytes());
        }
        kernels.push_back(std::move(entry));
      }
    plans.push_back(json::Object{{"targets", std::move(targets)},
                                 {"arena_bytes", int64_t(plan->arena_bytes())},
                                 {"weights_bytes", int64_t(plan->weights_size())},
                                 {"weights_offset", int64_t(plan->weights_offset())},
                                 {"kernels", std::move(kernels)}});
  }
  for (const artifact::Code *section : *manifest->code())
    code.push_back(json::Object{{"target", section->target()->str()},
                                {"kind", artifact::EnumNameCodeKind(section->kind())},
                                {"bytes", int64_t(section->size())},
                                {"offset", int64_t(section->offset())}});
  json::Object result{{"format_version", int64_t(header.format_version)},
                      {"sha256", toHex(ArrayRef<uint8_t>(header.digest), true)},
                      {"signer", isSigned(header) ? json::Value(keyHex(header.signer)) : nullptr},
                      {"bytes", int64_t(header.file_size)},
                      {"symbols", std::move(symbols)},
                      {"inputs", std::move(inputs)},
                      {"outputs", std::move(outputs)},
                      {"plans", std::move(plans)},
                      {"code", std::move(code)}};
  if (manifest->producer())
    result["producer"] = manifest->producer()->str();
  if (manifest->source())
    result["source"] = manifest->source()->str();
  return result;
}

/// An artifact's file, verified by loading it (without its code unless
/// asked: then nothing from it runs), and the manifest it holds.
struct Artifact {
  std::unique_ptr<MemoryBuffer> file;
  ModelPtr model;
  kiln_file_header_t header;
  const artifact::Model *manifest = nullptr;
};

/// Reads and verifies `path` into `out`, loading it with `flags`; an
/// error's exit status, or 0.
int readArtifact(const std::string &path, Artifact &out, uint32_t flags = KILN_MODEL_LOAD_NO_CODE) {
  // Read once, then verified: what is described is what was verified.
  auto file = readRegularFile(path);
  if (!file)
    return reportError("cannot read '" + path + "': " + file.getError().message());
  out.file = std::move(*file);
  kiln_model_options_t options;
  std::vector<uint8_t> keys;
  if (int status = modelOptions(flags, keys, options))
    return status;
  kiln_model_t *raw = nullptr;
  if (kiln_status_t status = kiln_model_load_memory(out.file->getBufferStart(),
                                                    out.file->getBufferSize(), &options, &raw)) {
    std::string message = path + ": " + kiln_status_message(status);
    kiln_status_free(status);
    return reportError(message);
  }
  out.model.reset(raw);
  const auto *data = reinterpret_cast<const uint8_t *>(out.file->getBufferStart());
  memcpy(&out.header, data, sizeof(out.header));
  out.manifest = artifact::GetModel(data + out.header.manifest_offset);
  return 0;
}

} // namespace

std::string shapeOf(const int64_t *shape, size_t rank) {
  std::string text;
  for (size_t i = 0; i < rank; ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text.empty() ? "scalar" : text;
}

std::string dimsOf(const kiln_model_t *model, size_t index, const kiln_tensor_info_t &info,
                   bool output) {
  if (!llvm::is_contained(ArrayRef<int64_t>(info.shape, info.rank), -1))
    return shapeOf(info.shape, info.rank);
  std::string text;
  for (size_t d = 0; d < info.rank; ++d) {
    const char *dim =
        output ? kiln_model_output_dim(model, index, d) : kiln_model_input_dim(model, index, d);
    text += (d ? " x " : "") + (dim ? std::string(dim) : std::to_string(info.shape[d]));
  }
  return text;
}

int inspectModel() {
  Artifact listed;
  if (int status = readArtifact(inspectFile, listed))
    return status;
  kiln_model_t *model = listed.model.get();
  const kiln_file_header_t &header = listed.header;
  const artifact::Model *manifest = listed.manifest;

  raw_ostream &os = outs();
  if (inspectJson) {
    os << formatv("{0:2}", modelJson(model, header, manifest)) << "\n";
    return 0;
  }
  os << inspectFile << ": kiln artifact, format version " << header.format_version << ", "
     << bytes(header.file_size) << "\n";
  os << "  sha256:   " << toHex(ArrayRef<uint8_t>(header.digest), true) << "\n";
  os << "  signed:   " << (isSigned(header) ? "by " + keyHex(header.signer) : "no") << "\n";
  if (manifest->producer())
    os << "  producer: " << manifest->producer()->str() << "\n";
  if (manifest->source())
    os << "  source:   " << manifest->source()->str() << "\n";
  size_t symbols = kiln_model_symbol_count(model);
  if (symbols)
    os << "symbols (sizes given at run time, checked against their ranges):\n";
  for (size_t i = 0; i < symbols; ++i) {
    kiln_symbol_info_t symbol;
    kiln_status_free(kiln_model_symbol_info(model, i, &symbol));
    os << "  " << symbol.name << ": " << symbol.min << " to " << symbol.max << ", tuned for "
       << symbol.opt << "\n";
  }
  // A symbolic tensor's size is its largest.
  auto size = [](const kiln_tensor_info_t &info) {
    bool symbolic = llvm::is_contained(ArrayRef<int64_t>(info.shape, info.rank), -1);
    return (symbolic ? " (at most " : " (") + bytes(info.byte_size) + ")";
  };
  os << "inputs:\n";
  kiln_tensor_info_t info;
  for (size_t i = 0; i < kiln_model_input_count(model); ++i) {
    kiln_status_free(kiln_model_input_info(model, i, &info));
    os << "  " << info.name << ": " << kiln_dtype_name(info.dtype) << " " << dimsOf(model, i, info)
       << size(info) << "\n";
  }
  os << "outputs:\n";
  for (size_t i = 0; i < kiln_model_output_count(model); ++i) {
    kiln_status_free(kiln_model_output_info(model, i, &info));
    os << "  " << info.name << ": " << kiln_dtype_name(info.dtype) << " "
       << dimsOf(model, i, info, true) << size(info) << "\n";
  }
  std::vector<std::string_view> names = symbolNames(manifest);
  for (flatbuffers::uoffset_t p = 0; p < manifest->plans()->size(); ++p) {
    const artifact::Plan *plan = manifest->plans()->Get(p);
    std::string targets;
    for (const artifact::Code *code : *manifest->code())
      if (code->plan() == p && targets.find(code->target()->str()) == std::string::npos)
        targets += (targets.empty() ? "" : ", ") + code->target()->str();
    os << "plan for " << targets << ":\n  activation arena: " << bytes(plan->arena_bytes())
       << ", weights: " << bytes(plan->weights_size()) << "\n";
    const auto *kernels = plan->kernels();
    if (!kernels)
      continue;
    bool gpu = kernels->size() && kernels->Get(0)->launch();
    bool amd = isAMDPlan(manifest, p);
    // Each launch's grid: sizes, or programs of the symbols in parentheses;
    // the column is as wide as the widest.
    std::vector<std::string> grids;
    int gridWidth = 14;
    for (const artifact::Kernel *kernel : *kernels) {
      std::string grid;
      if (const artifact::Launch *launch = kernel->launch())
        for (size_t d = 0; d < launch->grid()->size(); ++d) {
          std::string dim = gridDim(launch, d, names);
          grid += (d ? "x" : "") +
                  (dim.empty() ? std::to_string(launch->grid()->Get(d)) : "(" + dim + ")");
        }
      gridWidth = std::max(gridWidth, int(grid.size()));
      grids.push_back(std::move(grid));
    }
    os << "  kernels: " << kernels->size() << ", in order\n";
    if (gpu && amd)
      os << llvm::format("  %5s  %-11s  %-9s  %-6s  %-*s  %-10s  %5s  %5s  %8s  %7s  %s\n", "#",
                         "kind", "precision", "layout", gridWidth, "grid", "block", "vgprs",
                         "sgprs", "lds", "scratch", "ONNX node");
    else if (gpu)
      os << llvm::format("  %5s  %-11s  %-9s  %-6s  %-*s  %-10s  %4s  %8s  %6s  %s\n", "#", "kind",
                         "precision", "layout", gridWidth, "grid", "block", "regs", "smem",
                         "spills", "ONNX node");
    else
      os << llvm::format("  %5s  %-11s  %-9s  %-6s  %-30s  %s\n", "#", "kind", "precision",
                         "layout", "result", "ONNX node");
    std::string tma;       // the kernels that copy with TMA
    std::string sizesOnly; // the kernels that run when the sizes change
    for (flatbuffers::uoffset_t i = 0; i < kernels->size(); ++i) {
      const artifact::Kernel *kernel = kernels->Get(i);
      if (kernel->sizes_only())
        sizesOnly += (sizesOnly.empty() ? "" : ", ") + std::to_string(i);
      if (int64_t maps = kernel->launch() ? tensorMapsOf(kernel->launch()) : 0)
        tma += (tma.empty() ? "" : ", ") + std::to_string(i) + " (" + std::to_string(maps) + ")";
      std::string precision = precisionOf(kernel);
      std::string layout = text(kernel->layout());
      if (layout.empty())
        layout = "-";
      if (const artifact::Launch *launch = kernel->launch()) {
        auto shape = [](const flatbuffers::Vector<uint32_t> *dims) {
          std::string result;
          for (uint32_t dim : *dims)
            result += (result.empty() ? "" : "x") + std::to_string(dim);
          return result;
        };
        const std::string &grid = grids[i];
        uint64_t shared = uint64_t(launch->shared_bytes()) + launch->static_shared_bytes();
        if (amd) {
          os << llvm::format("  %5u  %-11s  %-9s  %-6s  %-*s  %-10s  %5u  %5u  %8s  %7s  %s\n",
                             unsigned(i), text(kernel->kind()).c_str(), precision.c_str(),
                             layout.c_str(), gridWidth, grid.c_str(),
                             shape(launch->block()).c_str(), launch->registers(),
                             launch->scalar_registers(), bytes(shared).c_str(),
                             bytes(launch->scratch_bytes()).c_str(), text(kernel->node()).c_str());
          continue;
        }
        os << llvm::format("  %5u  %-11s  %-9s  %-6s  %-*s  %-10s  %4u  %8s  %6s  %s\n",
                           unsigned(i), text(kernel->kind()).c_str(), precision.c_str(),
                           layout.c_str(), gridWidth, grid.c_str(), shape(launch->block()).c_str(),
                           launch->registers(), bytes(shared).c_str(),
                           bytes(launch->spill_bytes()).c_str(), text(kernel->node()).c_str());
        continue;
      }
      std::string buffer = text(kernel->buffer());
      std::string result = buffer == "arena" ? "arena +" + std::to_string(kernel->offset()) + ", " +
                                                   bytes(kernel->bytes())
                                             : "output '" + buffer + "', " + bytes(kernel->bytes());
      os << llvm::format("  %5u  %-11s  %-9s  %-6s  %-30s  %s\n", unsigned(i),
                         text(kernel->kind()).c_str(), precision.c_str(), layout.c_str(),
                         result.c_str(), text(kernel->node()).c_str());
    }
    if (!tma.empty())
      os << "  copying with TMA (tensor maps): kernels " << tma << "\n";
    if (!sizesOnly.empty())
      os << "  computing from the sizes alone, again only when a run's sizes change: kernels "
         << sizesOnly << "\n";
  }
  os << "sections:\n";
  os << "  header + manifest: " << bytes(KILN_HEADER_SIZE + header.manifest_size) << "\n";
  for (const artifact::Code *code : *manifest->code())
    os << "  code for " << code->target()->str() << " (" << artifact::EnumNameCodeKind(code->kind())
       << "): " << bytes(code->size()) << " at " << code->offset() << "\n";
  std::vector<uint64_t> shown;
  for (const artifact::Plan *plan : *manifest->plans())
    if (std::find(shown.begin(), shown.end(), plan->weights_offset()) == shown.end()) {
      shown.push_back(plan->weights_offset());
      os << "  weights: " << bytes(plan->weights_size()) << " at " << plan->weights_offset()
         << "\n";
    }
  return 0;
}

namespace {

/// Each kernel's mean milliseconds beside what `kiln inspect` says of it,
/// slowest first: the plan is the one whose code for `target` ran, on
/// `threads` threads of the host (0 on a GPU).
int printProfile(const artifact::Model *manifest, const std::string &target, uint32_t threads,
                 const std::vector<double> &profile) {
  raw_ostream &os = outs();
  if (profile.empty()) {
    os << "  no kernel profile: the artifact's code does not report its kernels "
          "(host code of format version 4 or older)\n";
    return 0;
  }
  const flatbuffers::Vector<flatbuffers::Offset<artifact::Kernel>> *kernels = nullptr;
  for (const artifact::Code *code : *manifest->code())
    if (code->target()->str() == target)
      kernels = manifest->plans()->Get(code->plan())->kernels();
  if (!kernels || kernels->size() != profile.size())
    return reportError("the plan for " + target + " in '" + benchFile +
                       "' does not have the kernels the session ran");
  std::vector<size_t> order(profile.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return profile[a] > profile[b]; });
  double total = 0;
  for (double milliseconds : profile)
    total += milliseconds;
  // A rate's share of what the session's threads can do at most, where
  // that can be measured: a core's FMAs, as many cores as threads.
  double core = threads ? hostPeakGflops(target) : 0, peak = core * threads;
  if (core > 0) {
    os << llvm::format("  peak at %s: %.1f GFLOP/s a core (FMAs timed now)", target.c_str(), core);
    if (threads > 1)
      os << llvm::format(", %.1f for %u threads", peak, threads);
    os << "\n";
  }
  os << "  kernels of the plan for " << target << ", slowest first (mean a run):\n"
     << llvm::format("  %5s  %-11s  %-9s  %9s  %6s  %8s  %5s  %s\n", "#", "kind", "precision", "ms",
                     "share", "GFLOP/s", "peak", "ONNX node");
  for (size_t i : order) {
    const artifact::Kernel *kernel = kernels->Get(flatbuffers::uoffset_t(i));
    // A product's rate: its multiply-adds, two operations each, over its time.
    char rate[32] = "-", share[32] = "-";
    if (kernel->flops() && profile[i] > 0) {
      double gflops = double(kernel->flops()) / (profile[i] * 1e6);
      snprintf(rate, sizeof(rate), "%.1f", gflops);
      if (peak > 0)
        snprintf(share, sizeof(share), "%.0f%%", 100.0 * gflops / peak);
    }
    os << llvm::format("  %5zu  %-11s  %-9s  %9.3f  %5.1f%%  %8s  %5s  %s\n", i,
                       text(kernel->kind()).c_str(), precisionOf(kernel).c_str(), profile[i],
                       total > 0 ? 100.0 * profile[i] / total : 0.0, rate, share,
                       text(kernel->node()).c_str());
  }
  return 0;
}

} // namespace

int benchModel() {
  // Read once: its code runs, its manifest sizes the inputs and names the
  // profile's kernels.
  Artifact loaded;
  if (int status = readArtifact(benchFile, loaded, 0))
    return status;
  ModelPtr &model = loaded.model;
  if (iterations == 0)
    return reportError("--iterations must be at least 1");

  // The symbols' values, in their order (which the manifest's dimension
  // programs number them by): their tuning points, unless --size says.
  std::vector<std::string> names;
  std::vector<int64_t> values;
  for (size_t i = 0; i < kiln_model_symbol_count(model.get()); ++i) {
    kiln_symbol_info_t symbol;
    kiln_status_free(kiln_model_symbol_info(model.get(), i, &symbol));
    names.push_back(symbol.name);
    values.push_back(symbol.opt);
  }
  for (const std::string &spec : benchSizes) {
    size_t equals = spec.rfind('=');
    int64_t value = 0;
    if (equals == std::string::npos || StringRef(spec).substr(equals + 1).getAsInteger(10, value))
      return reportError("--size wants SYMBOL=N, got '" + spec + "'");
    auto known = llvm::find(names, spec.substr(0, equals));
    if (known == names.end())
      return reportError("the model has no symbol named '" + spec.substr(0, equals) + "'");
    values[known - names.begin()] = value;
  }

  // Inputs of small random values (integer inputs get zeros: valid indices).
  std::mt19937 random(0);
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<kiln_tensor_t> inputs;
  for (size_t i = 0; i < kiln_model_input_count(model.get()); ++i) {
    kiln_tensor_info_t info;
    if (kiln_status_t status = kiln_model_input_info(model.get(), i, &info))
      return reportError(status);
    std::vector<int64_t> &shape = shapes.emplace_back(info.shape, info.shape + info.rank);
    size_t bytes = kiln_dtype_size(info.dtype);
    for (size_t d = 0; d < info.rank; ++d) {
      // A symbol, or an expression of them (a decoder's mask over past +
      // sequence tokens): its program's value.
      if (const char *dim = kiln_model_input_dim(model.get(), i, d)) {
        const flatbuffers::Vector<int64_t> *words =
            loaded.manifest->inputs()->Get(i)->dims()->Get(d)->program();
        std::optional<int64_t> size = format::evaluateDim({words->data(), words->size()}, values);
        if (!size || *size < 0)
          return reportError("input '" + std::string(info.name) + "' has dimension " +
                             std::to_string(d) + " " + dim + ", which has no size at these " +
                             "--size values");
        shape[d] = *size;
      }
      bytes *= size_t(std::max<int64_t>(shape[d], 0));
    }
    buffers.emplace_back(bytes, 0);
    if (info.dtype == KILN_DTYPE_F32) {
      std::normal_distribution<float> normal;
      float *values = reinterpret_cast<float *>(buffers.back().data());
      for (size_t k = 0; k < bytes / sizeof(float); ++k)
        values[k] = normal(random);
    }
    inputs.push_back(
        {info.name, info.dtype, info.rank, shape.data(), buffers.back().data(), bytes});
  }
  uint32_t flags =
      (benchNoCudaGraph ? KILN_SESSION_NO_GRAPH : 0u) | (benchProfile ? KILN_SESSION_PROFILE : 0u);
  kiln_session_options_t options = {KILN_API_VERSION, benchDevice.c_str(), benchThreads, flags};
  kiln_session_t *session = nullptr;
  if (kiln_status_t status = kiln_session_create(model.get(), &options, &session))
    return reportError(status);
  SessionPtr owner(session);

  std::vector<double> times, profile, run;
  double kernelMilliseconds = 0;
  for (unsigned i = 0; i < warmup + iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (kiln_status_t status = kiln_session_run(session, inputs.data(), inputs.size(), nullptr, 0))
      return reportError(status);
    std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    if (i >= warmup) {
      times.push_back(elapsed.count());
      kernelMilliseconds += kiln_session_kernel_milliseconds(session) / iterations;
      run.resize(kiln_session_kernel_profile(session, nullptr, 0));
      kiln_session_kernel_profile(session, run.data(), run.size());
      profile.resize(run.size());
      for (size_t k = 0; k < run.size(); ++k)
        profile[k] += run[k] / iterations;
    }
  }
  std::sort(times.begin(), times.end());
  auto percentile = [&](double p) {
    return times[std::min(times.size() - 1, size_t(p / 100.0 * double(times.size())))];
  };
  double mean = 0;
  for (double t : times)
    mean += t / double(times.size());
  outs() << benchFile << " on " << kiln_session_device(session);
  if (uint32_t threads = kiln_session_threads(session))
    outs() << ", " << threads << (threads == 1 ? " thread" : " threads");
  outs() << ": " << iterations << " runs after " << warmup << " warm-up runs\n"
         << llvm::format("  latency: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, mean %.3f ms\n",
                         percentile(50), percentile(90), percentile(99), mean)
         << llvm::format("  throughput: %.2f runs/s\n", 1000.0 / mean);
  // On a GPU, the kernels' own time, without the copies in and out.
  if (kernelMilliseconds > 0)
    outs() << llvm::format("  kernels on the device: mean %.3f ms a run\n", kernelMilliseconds);
  if (benchProfile)
    return printProfile(loaded.manifest, kiln_session_target(session),
                        kiln_session_threads(session), profile);
  return 0;
}

} // namespace kiln
