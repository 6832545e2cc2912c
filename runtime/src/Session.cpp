// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/Session.h"

#include "runtime/format/DimProgram.h"
#include "runtime/src/Status.h"

#include <cstdlib>
#include <cstring>

using namespace kiln;

kiln_session_s::~kiln_session_s() {
  // The device goes first: it may still be running, and it uses the model.
  device.reset();
  for (void *output : ownedOutputs)
    free(output);
  for (auto [output, size] : retiredOutputs)
    free(output);
  kiln_model_release(model);
}

namespace {

std::string shapeText(const int64_t *shape, size_t rank) {
  std::string text;
  for (size_t d = 0; d < rank; ++d)
    text += (d ? "x" : "") + std::to_string(shape[d]);
  return text.empty() ? "a scalar" : text;
}

/// What the model expects of a symbolic tensor: `batch x 128`.
std::string dimsText(const TensorInfo &info) {
  std::string text;
  for (size_t d = 0; d < info.shape.size(); ++d) {
    std::string dim = info.shape[d] < 0 ? info.dimTexts[d] : std::to_string(info.shape[d]);
    text += (d ? " x " : "") + dim;
  }
  return text;
}

/// Checks a caller's tensor's dtype and rank against the model's.
kiln_status_t checkKind(const kiln_tensor_t &tensor, const TensorInfo &info, const char *what) {
  // The caller's dtype is read as the integer it may be, not as an enum
  // that may hold no enumerator.
  uint32_t dtype;
  static_assert(sizeof(dtype) == sizeof(tensor.dtype), "kiln_dtype_t is 32 bits");
  memcpy(&dtype, &tensor.dtype, sizeof(dtype));
  if (dtype != uint32_t(info.dtype)) {
    std::string given = dtype <= uint32_t(KILN_DTYPE_F8E5M2)
                            ? kiln_dtype_name(static_cast<kiln_dtype_t>(dtype))
                            : "unknown (" + std::to_string(dtype) + ")";
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has dtype %s; the model expects %s",
                      what, info.name.c_str(), given.c_str(), kiln_dtype_name(info.dtype));
  }
  if (info.symbolic() && tensor.rank != info.shape.size())
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s '%s' has %zu dimensions; the model expects %zu (%s)", what,
                      info.name.c_str(), tensor.rank, info.shape.size(), dimsText(info).c_str());
  if (tensor.rank != 0 && !tensor.shape)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has no shape", what,
                      info.name.c_str());
  return nullptr;
}

/// Checks a caller's tensor against the shape and bytes it has in this
/// run (`shape`, `bytes`), after checkKind.
kiln_status_t checkTensor(const kiln_tensor_t &tensor, const TensorInfo &info,
                          const std::vector<int64_t> &shape, size_t bytes, const char *what) {
  bool sameShape =
      tensor.rank == shape.size() &&
      (tensor.rank == 0 || memcmp(tensor.shape, shape.data(), tensor.rank * sizeof(int64_t)) == 0);
  if (!sameShape) {
    if (!info.symbolic())
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "%s '%s' has the wrong shape; the model expects %s", what,
                        info.name.c_str(), shapeText(shape.data(), shape.size()).c_str());
    size_t d = 0;
    while (tensor.shape[d] == shape[d])
      ++d;
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s '%s' has shape %s; at these sizes the model expects %s (%s): "
                      "dimension %zu should be %lld",
                      what, info.name.c_str(), shapeText(tensor.shape, tensor.rank).c_str(),
                      shapeText(shape.data(), shape.size()).c_str(), dimsText(info).c_str(), d,
                      (long long)shape[d]);
  }
  if (tensor.byte_size != bytes)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has %zu bytes; the model expects %zu",
                      what, info.name.c_str(), tensor.byte_size, bytes);
  if (!tensor.data && bytes)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has no data", what, info.name.c_str());
  return nullptr;
}

/// Takes the value of each symbol that a dimension of input `index`
/// (`tensor`, of the right rank) is by itself, checking it against the
/// symbol's range and against the value an earlier input gave it.
kiln_status_t bindSymbols(kiln_session_t &session, size_t index, const kiln_tensor_t &tensor) {
  const kiln_model_t &model = *session.model;
  const TensorInfo &info = model.inputs[index];
  for (size_t d = 0; d < info.dims.size(); ++d) {
    std::optional<size_t> symbol = format::bareSymbol({info.dims[d].data(), info.dims[d].size()});
    if (!symbol)
      continue;
    const SymbolInfo &range = model.symbols[*symbol];
    int64_t value = tensor.shape[d];
    auto &[source, sourceDim] = session.symbolSources[*symbol];
    if (source != SIZE_MAX) {
      if (value != session.symbols[*symbol])
        return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                          "input '%s' has %lld at dimension %zu, which is '%s', but input '%s' "
                          "gives '%s' as %lld (its dimension %zu)",
                          info.name.c_str(), (long long)value, d, range.name.c_str(),
                          model.inputs[source].name.c_str(), range.name.c_str(),
                          (long long)session.symbols[*symbol], sourceDim);
      continue;
    }
    if (value < range.min || value > range.max)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "input '%s' has %lld at dimension %zu, which is '%s'; the model takes "
                        "'%s' from %lld to %lld (recompile with --input-shape to change it)",
                        info.name.c_str(), (long long)value, d, range.name.c_str(),
                        range.name.c_str(), (long long)range.min, (long long)range.max);
    session.symbols[*symbol] = value;
    source = index;
    sourceDim = d;
  }
  return nullptr;
}

/// The shape and bytes `info` has at the session's symbol values (for a
/// static tensor, its own); fails when a dimension is negative or the
/// tensor too large there.
kiln_status_t sizeAt(const kiln_session_t &session, const TensorInfo &info, const char *what,
                     std::vector<int64_t> &shape, size_t &bytes) {
  if (!info.symbolic()) {
    shape = info.shape;
    bytes = info.byteSize;
    return nullptr;
  }
  shape.resize(info.dims.size());
  bytes = kiln_dtype_size(info.dtype);
  for (size_t d = 0; d < info.dims.size(); ++d) {
    std::optional<int64_t> size =
        format::evaluateDim({info.dims[d].data(), info.dims[d].size()}, session.symbols);
    if (!size || *size < 0 || __builtin_mul_overflow(bytes, size_t(*size), &bytes))
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "%s '%s' has no valid size at these sizes: its dimension %zu (%s) is %s",
                        what, info.name.c_str(), d, info.dimTexts[d].c_str(),
                        size ? std::to_string(*size).c_str() : "too large");
    shape[d] = *size;
  }
  return nullptr;
}

/// Whether [a, a + aBytes) and [b, b + bBytes) share a byte.
bool overlap(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto first = reinterpret_cast<uintptr_t>(a), second = reinterpret_cast<uintptr_t>(b);
  return first < second + bBytes && second < first + aBytes;
}

/// Whether [buffer, buffer + size) shares a byte with a buffer `session`
/// owns (and frees).
bool sessionOwns(const kiln_session_t &session, const void *buffer, size_t size) {
  for (size_t i = 0; i < session.ownedOutputs.size(); ++i)
    if (session.ownedOutputs[i] &&
        overlap(buffer, size, session.ownedOutputs[i], session.ownedBytes[i]))
      return true;
  for (auto [retired, bytes] : session.retiredOutputs)
    if (overlap(buffer, size, retired, bytes))
      return true;
  return false;
}

/// The model tensor named `name`, or the list's size.
size_t find(const std::vector<TensorInfo> &list, const char *name) {
  for (size_t i = 0; i < list.size(); ++i)
    if (name && list[i].name == name)
      return i;
  return list.size();
}

/// Binds `inputs` to the model's: `in` gets each one's data in model
/// order, and the session this run's symbol values and input shapes.
kiln_status_t bindInputs(kiln_session_t &session, const kiln_tensor_t *inputs, size_t input_count,
                         std::vector<const void *> &in) {
  const kiln_model_t &model = *session.model;
  size_t numInputs = model.inputs.size();
  session.symbols.assign(model.symbols.size(), 0);
  session.symbolSources.assign(model.symbols.size(), {SIZE_MAX, 0});
  std::vector<const kiln_tensor_t *> given(numInputs, nullptr);
  for (size_t i = 0; i < input_count; ++i) {
    size_t index = find(model.inputs, inputs[i].name);
    if (index == numInputs)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "the model has no input named '%s'",
                        inputs[i].name ? inputs[i].name : "(null)");
    if (given[index])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "input '%s' is given twice", inputs[i].name);
    given[index] = &inputs[i];
    if (kiln_status_t status = checkKind(inputs[i], model.inputs[index], "input"))
      return status;
  }
  for (size_t i = 0; i < numInputs; ++i)
    if (!given[i])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "input '%s' is missing",
                        model.inputs[i].name.c_str());
  // Symbols first, in the model's order of inputs, then every dimension
  // against its value at them.
  for (size_t i = 0; i < numInputs; ++i)
    if (kiln_status_t status = bindSymbols(session, i, *given[i]))
      return status;
  session.inputShapes.resize(numInputs);
  session.inputBytes.resize(numInputs);
  for (size_t i = 0; i < numInputs; ++i) {
    const TensorInfo &info = model.inputs[i];
    if (kiln_status_t status =
            sizeAt(session, info, "input", session.inputShapes[i], session.inputBytes[i]))
      return status;
    if (kiln_status_t status =
            checkTensor(*given[i], info, session.inputShapes[i], session.inputBytes[i], "input"))
      return status;
    in[i] = given[i]->data;
  }
  return nullptr;
}

} // namespace

kiln_status_t kiln::run(kiln_session_t *session, const kiln_tensor_t *inputs, size_t input_count,
                        kiln_tensor_t *outputs, size_t output_count, bool wait) {
  if (!session || (input_count && !inputs) || (output_count && !outputs))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_session_run: session, inputs and outputs must not be NULL");
  // The outputs a run in flight writes stay as they are until it ends.
  Device &device = *session->device;
  if (kiln_status_t status = device.wait())
    return status;
  kiln_model_t *model = session->model;
  size_t numInputs = model->inputs.size(), numOutputs = model->outputs.size();
  std::vector<const void *> in(numInputs, nullptr);
  std::vector<void *> out(numOutputs, nullptr);
  if (kiln_status_t status = bindInputs(*session, inputs, input_count, in))
    return status;
  session->outputShapes.resize(numOutputs);
  session->outputBytes.resize(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i)
    if (kiln_status_t status = sizeAt(*session, model->outputs[i], "output",
                                      session->outputShapes[i], session->outputBytes[i]))
      return status;

  // Outputs the caller gives buffers for are written in place.
  std::vector<size_t> outputIndex(output_count);
  std::vector<bool> asked(numOutputs, false);
  for (size_t i = 0; i < output_count; ++i) {
    size_t index = find(model->outputs, outputs[i].name);
    if (index == numOutputs)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "the model has no output named '%s'",
                        outputs[i].name ? outputs[i].name : "(null)");
    if (asked[index])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "output '%s' is asked for twice",
                        outputs[i].name);
    if (outputs[i].data) {
      const TensorInfo &info = model->outputs[index];
      if (kiln_status_t status = checkKind(outputs[i], info, "output"))
        return status;
      if (kiln_status_t status = checkTensor(outputs[i], info, session->outputShapes[index],
                                             session->outputBytes[index], "output"))
        return status;
      if (sessionOwns(*session, outputs[i].data, outputs[i].byte_size))
        return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                          "output '%s' is given a buffer the session owns (an earlier run's "
                          "output); give a buffer of your own, or none",
                          outputs[i].name);
    }
    asked[index] = true;
    outputIndex[i] = index;
    out[index] = outputs[i].data;
  }
  // Every other output, asked for without a buffer or not asked for at all,
  // goes to the session's buffer for it: the last run's, unless the caller
  // passes that buffer in (a result fed back as an input) or this run's
  // output is larger, else a fresh one.
  if (session->ownedOutputs.size() != numOutputs) {
    session->ownedOutputs.assign(numOutputs, nullptr);
    session->ownedBytes.assign(numOutputs, 0);
  }
  auto passedIn = [&](const void *buffer, size_t size) {
    for (size_t i = 0; i < input_count; ++i)
      if (overlap(buffer, size, inputs[i].data, inputs[i].byte_size))
        return true;
    for (size_t i = 0; i < output_count; ++i)
      if (outputs[i].data && overlap(buffer, size, outputs[i].data, outputs[i].byte_size))
        return true;
    return false;
  };
  std::vector<void *> fresh(numOutputs, nullptr);
  std::vector<size_t> freshBytes(numOutputs, 0);
  auto freeFresh = [&] {
    for (void *buffer : fresh)
      free(buffer);
  };
  for (size_t i = 0; i < numOutputs; ++i) {
    if (out[i])
      continue;
    size_t needed = session->outputBytes[i];
    void *owned = session->ownedOutputs[i];
    if (owned && session->ownedBytes[i] >= needed && !passedIn(owned, session->ownedBytes[i])) {
      out[i] = owned;
      continue;
    }
    // The run's size, at least twice the last buffer's when the output
    // grows (a decoder's present, a token longer each step), never more
    // than it can be: its largest size may be far more than the machine
    // has (logits over 1024 sequences of 1024 tokens).
    size_t size = needed;
    if (session->ownedBytes[i] < needed)
      size = std::min(model->outputs[i].byteSize, std::max(needed, 2 * session->ownedBytes[i]));
    if (posix_memalign(&fresh[i], 64, size ? size : 1) != 0) {
      fresh[i] = nullptr;
      freeFresh();
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate output '%s'",
                        model->outputs[i].name.c_str());
    }
    freshBytes[i] = size;
    out[i] = fresh[i];
  }
  kiln_status_t status = device.enqueue(in, out, session->symbols);
  if (!status && wait)
    status = device.wait();
  if (status) {
    freeFresh();
    return status;
  }

  // A fresh buffer replaces the session's last one for its output. A
  // buffer this run was given stays until a run that is not; the rest go.
  std::vector<std::pair<void *, size_t>> retired;
  auto retire = [&](void *buffer, size_t size) {
    if (passedIn(buffer, size))
      retired.emplace_back(buffer, size);
    else
      free(buffer);
  };
  for (auto [buffer, size] : session->retiredOutputs)
    retire(buffer, size);
  for (size_t i = 0; i < numOutputs; ++i) {
    if (!fresh[i])
      continue;
    if (void *old = session->ownedOutputs[i])
      retire(old, session->ownedBytes[i]);
    session->ownedOutputs[i] = fresh[i];
    session->ownedBytes[i] = freshBytes[i];
  }
  session->retiredOutputs = std::move(retired);
  for (size_t i = 0; i < output_count; ++i) {
    size_t index = outputIndex[i];
    const TensorInfo &info = model->outputs[index];
    if (!outputs[i].data) {
      // A static output's shape is the model's; a symbolic one's, this
      // run's, held by the session until its next run.
      const std::vector<int64_t> &shape =
          info.symbolic() ? session->outputShapes[index] : info.shape;
      outputs[i].data = out[index];
      outputs[i].dtype = info.dtype;
      outputs[i].rank = shape.size();
      outputs[i].shape = shape.data();
      outputs[i].byte_size = session->outputBytes[index];
    }
  }
  return nullptr;
}
