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
  kiln_model_release(model);
}

namespace {

/// Checks a caller's tensor against the model's.
kiln_status_t checkTensor(const kiln_tensor_t &tensor, const TensorInfo &info, const char *what) {
  if (tensor.dtype != info.dtype)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s '%s' has dtype %s; the model expects %s",
                      what, info.name.c_str(), kiln_dtype_name(tensor.dtype),
                      kiln_dtype_name(info.dtype));
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
    if (outputs[i].data)
      if (kiln_status_t status = checkTensor(outputs[i], model->outputs[index], "output"))
        return status;
    asked[index] = true;
    outputIndex[i] = index;
    out[index] = outputs[i].data;
  }
  // Every other output, asked for without a buffer or not asked for at all,
  // gets a fresh one.
  std::vector<void *> fresh;
  for (size_t i = 0; i < numOutputs; ++i) {
    if (out[i])
      continue;
    void *buffer = nullptr;
    size_t size = model->outputs[i].byteSize;
    if (posix_memalign(&buffer, 64, size ? size : 1) != 0) {
      for (void *other : fresh)
        free(other);
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate output '%s'",
                        model->outputs[i].name.c_str());
    }
    fresh.push_back(buffer);
    out[i] = buffer;
  }
  kiln_status_t status = device.enqueue(in, out);
  if (!status && wait)
    status = device.wait();
  if (status) {
    for (void *buffer : fresh)
      free(buffer);
    return status;
  }

  // Hand out the session-owned outputs; the previous run's are freed.
  for (void *old : session->ownedOutputs)
    free(old);
  session->ownedOutputs.clear();
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
  session->ownedOutputs = std::move(fresh);
  return nullptr;
}
