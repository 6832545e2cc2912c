// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/src/Session.h"

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

/// Checks a caller's tensor against the model's.
kiln_status_t checkTensor(const kiln_tensor_t &tensor, const TensorInfo &info, const char *what) {
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
  bool sameShape =
      tensor.rank == info.shape.size() &&
      (tensor.rank == 0 || (tensor.shape && memcmp(tensor.shape, info.shape.data(),
                                                   tensor.rank * sizeof(int64_t)) == 0));
  if (!sameShape) {
    std::string expected;
    for (int64_t dim : info.shape)
      expected += (expected.empty() ? "" : "x") + std::to_string(dim);
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s '%s' has the wrong shape; the model expects %s", what, info.name.c_str(),
                      expected.empty() ? "a scalar" : expected.c_str());
  }
  if (tensor.byte_size != info.byteSize)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has %zu bytes; the model expects %zu",
                      what, info.name.c_str(), tensor.byte_size, info.byteSize);
  if (!tensor.data && info.byteSize)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has no data", what, info.name.c_str());
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
        overlap(buffer, size, session.ownedOutputs[i], session.model->outputs[i].byteSize))
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
  std::vector<bool> seen(numInputs, false);
  for (size_t i = 0; i < input_count; ++i) {
    size_t index = find(model->inputs, inputs[i].name);
    if (index == numInputs)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "the model has no input named '%s'",
                        inputs[i].name ? inputs[i].name : "(null)");
    if (seen[index])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "input '%s' is given twice", inputs[i].name);
    seen[index] = true;
    if (kiln_status_t status = checkTensor(inputs[i], model->inputs[index], "input"))
      return status;
    in[index] = inputs[i].data;
  }
  for (size_t i = 0; i < numInputs; ++i)
    if (!seen[i])
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "input '%s' is missing",
                        model->inputs[i].name.c_str());

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
      if (kiln_status_t status = checkTensor(outputs[i], model->outputs[index], "output"))
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
  // passes that buffer in (a result fed back as an input), else a fresh one.
  if (session->ownedOutputs.size() != numOutputs)
    session->ownedOutputs.assign(numOutputs, nullptr);
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
  auto freeFresh = [&] {
    for (void *buffer : fresh)
      free(buffer);
  };
  for (size_t i = 0; i < numOutputs; ++i) {
    if (out[i])
      continue;
    size_t size = model->outputs[i].byteSize;
    void *owned = session->ownedOutputs[i];
    if (owned && !passedIn(owned, size)) {
      out[i] = owned;
      continue;
    }
    if (posix_memalign(&fresh[i], 64, size ? size : 1) != 0) {
      fresh[i] = nullptr;
      freeFresh();
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate output '%s'",
                        model->outputs[i].name.c_str());
    }
    out[i] = fresh[i];
  }
  kiln_status_t status = device.enqueue(in, out);
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
      retire(old, model->outputs[i].byteSize);
    session->ownedOutputs[i] = fresh[i];
  }
  session->retiredOutputs = std::move(retired);
  for (size_t i = 0; i < output_count; ++i) {
    size_t index = outputIndex[i];
    const TensorInfo &info = model->outputs[index];
    if (!outputs[i].data) {
      outputs[i].data = out[index];
      outputs[i].dtype = info.dtype;
      outputs[i].rank = info.shape.size();
      outputs[i].shape = info.shape.data();
      outputs[i].byte_size = info.byteSize;
    }
  }
  return nullptr;
}
