// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API of include/kiln/runtime.h: checks each call's arguments and
// hands it to the loader, the model, the session or its device. No
// exception crosses it.

#include "kiln/runtime.h"

#include "runtime/src/Device.h"
#include "runtime/src/Loader.h"
#include "runtime/src/Session.h"
#include "runtime/src/Status.h"

#include <cstring>
#include <new>

using namespace kiln;

namespace {

/// Runs an API body; no exception (std::bad_alloc from a std::string, say)
/// crosses the C ABI.
template <typename Body> kiln_status_t guarded(Body body) {
  try {
    return body();
  } catch (...) {
    return outOfMemory();
  }
}

/// Options of an API version this runtime does not know are refused.
template <typename Options> kiln_status_t checkVersion(const Options *options) {
  if (options && options->api_version > KILN_API_VERSION)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED, "options of API version %u; this runtime has %u",
                      options->api_version, KILN_API_VERSION);
  return nullptr;
}

/// `dtype` as an integer, read without loading an enum that may hold no
/// enumerator.
uint32_t dtypeValue(const kiln_dtype_t &dtype) {
  uint32_t value;
  static_assert(sizeof(value) == sizeof(dtype), "kiln_dtype_t is 32 bits");
  memcpy(&value, &dtype, sizeof(value));
  return value;
}

/// The loader's options from the caller's (NULL: the defaults).
kiln_status_t loadOptions(const kiln_model_options_t *options, LoadOptions &out) {
  if (kiln_status_t status = checkVersion(options))
    return status;
  if (!options)
    return nullptr;
  out.loadCode = !(options->flags & KILN_MODEL_LOAD_NO_CODE);
  // The trusted keys came with API version 5: older callers' structs end
  // before them.
  if (options->api_version < 5 || options->trusted_key_count == 0)
    return nullptr;
  if (!options->trusted_keys)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_model_options_t: %zu trusted keys, but trusted_keys is NULL",
                      options->trusted_key_count);
  for (size_t i = 0; i < options->trusted_key_count; ++i) {
    TrustedKey &key = out.trustedKeys.emplace_back();
    memcpy(key.data(), options->trusted_keys + i * key.size(), key.size());
  }
  return nullptr;
}

kiln_status_t describe(const std::vector<TensorInfo> &list, size_t index, const char *what,
                       kiln_tensor_info_t *out) {
  if (index >= list.size())
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s index %zu is out of range (the model has %zu)", what, index, list.size());
  const TensorInfo &info = list[index];
  *out = {info.name.c_str(), info.dtype, info.shape.size(), info.shape.data(), info.byteSize};
  return nullptr;
}

} // namespace

// The API functions keep the C linkage the header gives them.

kiln_status_code_t kiln_status_code(kiln_status_t status) {
  return status ? status->code : KILN_STATUS_OK;
}

const char *kiln_status_message(kiln_status_t status) {
  return status ? status->message.c_str() : "";
}

void kiln_status_free(kiln_status_t status) {
  if (status != outOfMemory())
    delete status;
}

// A caller's dtype may hold no enumerator: it is read as an integer.

size_t kiln_dtype_size(kiln_dtype_t dtype) {
  switch (dtypeValue(dtype)) {
  case KILN_DTYPE_F64:
  case KILN_DTYPE_I64:
  case KILN_DTYPE_U64:
    return 8;
  case KILN_DTYPE_F32:
  case KILN_DTYPE_I32:
  case KILN_DTYPE_U32:
    return 4;
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16:
  case KILN_DTYPE_I16:
  case KILN_DTYPE_U16:
    return 2;
  case KILN_DTYPE_I8:
  case KILN_DTYPE_U8:
  case KILN_DTYPE_BOOL:
  case KILN_DTYPE_F8E4M3FN:
  case KILN_DTYPE_F8E5M2:
    return 1;
  }
  return 0;
}

const char *kiln_dtype_name(kiln_dtype_t dtype) {
  static const char *const names[] = {"f32", "f16", "bf16", "f64",      "i8",
                                      "i16", "i32", "i64",  "u8",       "u16",
                                      "u32", "u64", "bool", "f8e4m3fn", "f8e5m2"};
  uint32_t index = dtypeValue(dtype);
  return index < sizeof(names) / sizeof(names[0]) ? names[index] : "unknown";
}

kiln_status_t kiln_model_load_file(const char *path, const kiln_model_options_t *options,
                                   kiln_model_t **out_model) {
  return guarded([&] {
    if (!path || !out_model)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "kiln_model_load_file: path and out_model must not be NULL");
    *out_model = nullptr;
    LoadOptions load;
    if (kiln_status_t status = loadOptions(options, load))
      return status;
    return loadFile(path, load, out_model);
  });
}

kiln_status_t kiln_model_load_memory(const void *data, size_t size,
                                     const kiln_model_options_t *options,
                                     kiln_model_t **out_model) {
  return guarded([&] {
    if (!data || !out_model)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "kiln_model_load_memory: data and out_model must not be NULL");
    *out_model = nullptr;
    LoadOptions load;
    if (kiln_status_t status = loadOptions(options, load))
      return status;
    return loadMemory(data, size, load, out_model);
  });
}

void kiln_model_retain(kiln_model_t *model) {
  if (model)
    model->references.fetch_add(1, std::memory_order_relaxed);
}

void kiln_model_release(kiln_model_t *model) {
  if (model && model->references.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete model;
}

size_t kiln_model_input_count(const kiln_model_t *model) {
  return model ? model->inputs.size() : 0;
}
size_t kiln_model_output_count(const kiln_model_t *model) {
  return model ? model->outputs.size() : 0;
}
uint64_t kiln_model_arena_bytes(const kiln_model_t *model) {
  if (!model || model->plans.empty())
    return 0;
  return model->plans[model->hostPlan >= 0 ? size_t(model->hostPlan) : 0].arenaBytes;
}

size_t kiln_model_target_count(const kiln_model_t *model) {
  return model ? model->targets.size() : 0;
}

const char *kiln_model_target(const kiln_model_t *model, size_t index) {
  return model && index < model->targets.size() ? model->targets[index].c_str() : nullptr;
}

kiln_status_t kiln_model_input_info(const kiln_model_t *model, size_t index,
                                    kiln_tensor_info_t *out_info) {
  if (!model || !out_info)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_model_input_info: model and out_info must not be NULL");
  return describe(model->inputs, index, "input", out_info);
}

kiln_status_t kiln_model_output_info(const kiln_model_t *model, size_t index,
                                     kiln_tensor_info_t *out_info) {
  if (!model || !out_info)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_model_output_info: model and out_info must not be NULL");
  return describe(model->outputs, index, "output", out_info);
}

size_t kiln_model_symbol_count(const kiln_model_t *model) {
  return model ? model->symbols.size() : 0;
}

kiln_status_t kiln_model_symbol_info(const kiln_model_t *model, size_t index,
                                     kiln_symbol_info_t *out_info) {
  if (!model || !out_info)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_model_symbol_info: model and out_info must not be NULL");
  if (index >= model->symbols.size())
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "symbol %zu does not exist: the model has %zu",
                      index, model->symbols.size());
  const kiln::SymbolInfo &symbol = model->symbols[index];
  *out_info = {symbol.name.c_str(), symbol.min, symbol.max, symbol.opt};
  return nullptr;
}

namespace {

const char *dimText(const std::vector<kiln::TensorInfo> &list, size_t index, size_t dim) {
  if (index >= list.size() || dim >= list[index].dims.size() || list[index].shape[dim] >= 0)
    return nullptr;
  return list[index].dimTexts[dim].c_str();
}

} // namespace

const char *kiln_model_input_dim(const kiln_model_t *model, size_t index, size_t dim) {
  return model ? dimText(model->inputs, index, dim) : nullptr;
}

const char *kiln_model_output_dim(const kiln_model_t *model, size_t index, size_t dim) {
  return model ? dimText(model->outputs, index, dim) : nullptr;
}

kiln_status_t kiln_session_create(kiln_model_t *model, const kiln_session_options_t *options,
                                  kiln_session_t **out_session) {
  if (!model || !out_session)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_session_create: model and out_session must not be NULL");
  *out_session = nullptr;
  if (kiln_status_t status = checkVersion(options))
    return status;
  if (!model->hasCode)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "the model was loaded without its code and cannot run");
  const char *device = options && options->device ? options->device : "host";
  // Each field is read only from options of the version that has it.
  uint32_t flags = options && options->api_version >= 3 ? options->flags : 0;
  DeviceOptions deviceOptions;
  deviceOptions.threads = options && options->api_version >= 2 ? options->threads : 0;
  deviceOptions.useGraph = !(flags & KILN_SESSION_NO_GRAPH);
  deviceOptions.profile = options && options->api_version >= 4 && (flags & KILN_SESSION_PROFILE);
  auto session = std::unique_ptr<kiln_session_s>(new (std::nothrow) kiln_session_s(model));
  if (!session)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (kiln_status_t status = openDevice(model, device, deviceOptions, session->device))
    return status;
  *out_session = session.release();
  return nullptr;
}

void kiln_session_destroy(kiln_session_t *session) { delete session; }

uint32_t kiln_session_threads(const kiln_session_t *session) {
  return session ? session->device->threads() : 0;
}

const char *kiln_session_device(const kiln_session_t *session) {
  return session ? session->device->describe() : "";
}

const char *kiln_session_target(const kiln_session_t *session) {
  return session ? session->device->target() : "";
}

kiln_status_t kiln_session_run(kiln_session_t *session, const kiln_tensor_t *inputs,
                               size_t input_count, kiln_tensor_t *outputs, size_t output_count) {
  return guarded([&] { return run(session, inputs, input_count, outputs, output_count, true); });
}

kiln_status_t kiln_session_run_async(kiln_session_t *session, const kiln_tensor_t *inputs,
                                     size_t input_count, kiln_tensor_t *outputs,
                                     size_t output_count) {
  return guarded([&] { return run(session, inputs, input_count, outputs, output_count, false); });
}

double kiln_session_kernel_milliseconds(const kiln_session_t *session) {
  return session ? session->device->kernelMilliseconds() : 0.0;
}

size_t kiln_session_kernel_profile(const kiln_session_t *session, double *milliseconds,
                                   size_t count) {
  return session ? session->device->kernelProfile(milliseconds, milliseconds ? count : 0) : 0;
}

kiln_status_t kiln_session_wait(kiln_session_t *session) {
  if (!session)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_wait: session must not be NULL");
  return guarded([&] { return session->device->wait(); });
}
