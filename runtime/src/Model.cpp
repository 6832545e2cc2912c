// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/Model.h"

#include "runtime/format/DimProgram.h"
#include "runtime/format/PlanRecord.h"

#include <algorithm>
#include <cstdlib>
#include <sys/mman.h>

kiln::Storage::~Storage() {
  if (mapped)
    munmap(data, size);
  else
    free(data);
}

std::string kiln::codeTargets(const kiln_model_t &model) {
  std::string list;
  for (const std::string &target : model.targets)
    list += (list.empty() ? "" : ", ") + target;
  return list;
}

std::string kiln::manifestRecord(const kiln_model_t &model, const CodeSection &code) {
  std::vector<std::string_view> names;
  for (const SymbolInfo &symbol : model.symbols)
    names.push_back(symbol.name);
  auto tensors = [&](const std::vector<TensorInfo> &list) {
    std::vector<format::RecordTensor> result;
    for (const TensorInfo &info : list) {
      std::vector<std::string> dims;
      for (size_t d = 0; d < info.dims.size(); ++d)
        dims.push_back(
            info.shape[d] < 0
                ? format::dimText({info.dims[d].data(), info.dims[d].size()}, names, /*quote=*/true)
                : std::string());
      result.push_back(
          {info.name, artifact::DType(info.dtype), info.shape, std::move(dims), info.byteSize});
    }
    return result;
  };
  const Plan &plan = model.plans[code.plan];
  format::PlanFacts facts;
  facts.target = code.target;
  for (const SymbolInfo &symbol : model.symbols)
    facts.symbols.push_back({symbol.name, symbol.min, symbol.max});
  facts.inputs = tensors(model.inputs);
  facts.outputs = tensors(model.outputs);
  facts.arenaBytes = plan.arenaBytes;
  facts.weightsBytes = plan.weightsSize;
  facts.kernels = plan.kernels;
  for (const Launch &launch : plan.launches) {
    format::RecordLaunch &record = facts.launches.emplace_back();
    record.kernel = launch.kernel;
    std::copy(launch.grid, launch.grid + 3, record.grid);
    std::copy(launch.block, launch.block + 3, record.block);
    record.sharedBytes = launch.sharedBytes;
    record.gridPrograms = launch.gridDims;
    for (const LaunchArg &arg : launch.args) {
      format::RecordArg &out = record.args.emplace_back();
      out.programs = arg.dims;
      if (arg.base == LaunchArg::Base::Scalar) {
        out.width = arg.width;
        out.bits = arg.bits;
        continue;
      }
      static const char *const bases[] = {"", "input", "output", "arena", "weights"};
      out.base = bases[size_t(arg.base)];
      out.index = arg.index;
      out.byteOffset = arg.byteOffset;
      out.offset = arg.offset;
      out.sizes = arg.sizes;
      out.strides = arg.strides;
      if (arg.tensorMap) {
        out.mapDims = arg.mapDims;
        out.mapStrides = arg.mapStrides;
        out.mapBox = arg.mapBox;
        out.swizzle = arg.swizzle;
      }
    }
  }
  return format::planRecord(facts);
}

kiln_status_t kiln::deviceModel(kiln_model_t &model, const std::string &device,
                                const MakeDeviceModel &make, DeviceModel **out) {
  std::lock_guard<std::mutex> lock(model.devicesMutex);
  for (auto &[name, state] : model.devices)
    if (name == device) {
      *out = state.get();
      return nullptr;
    }
  *out = nullptr;
  if (!make)
    return nullptr;
  std::unique_ptr<DeviceModel> state;
  if (kiln_status_t status = make(state))
    return status;
  *out = state.get();
  model.devices.emplace_back(device, std::move(state));
  return nullptr;
}
