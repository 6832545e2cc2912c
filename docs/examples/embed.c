// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* Runs a compiled model from C: loads it, describes its inputs and outputs,
 * fills every input with ones and prints a checksum of every output.
 *
 *   cc embed.c $(pkg-config --cflags --libs kiln) -o embed
 *   ./embed model.kiln
 */
#include <kiln/runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(kiln_status_t status) {
  if (!status)
    return 0;
  fprintf(stderr, "embed: %s\n", kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: embed MODEL.kiln\n");
    return 2;
  }
  kiln_model_t *model = NULL;
  if (check(kiln_model_load_file(argv[1], NULL, &model)))
    return 1;

  size_t input_count = kiln_model_input_count(model);
  size_t output_count = kiln_model_output_count(model);
  kiln_tensor_t *inputs = calloc(input_count, sizeof(kiln_tensor_t));
  kiln_tensor_t *outputs = calloc(output_count, sizeof(kiln_tensor_t));
  int failed = !inputs || !outputs;
  for (size_t i = 0; i < input_count && !failed; ++i) {
    kiln_tensor_info_t info;
    failed = check(kiln_model_input_info(model, i, &info));
    if (failed)
      break;
    /* Ones of whatever dtype: here every input is f32. */
    float *data = malloc(info.byte_size);
    for (size_t k = 0; data && k < info.byte_size / sizeof(float); ++k)
      data[k] = 1.0f;
    inputs[i] = (kiln_tensor_t){info.name, info.dtype, info.rank, info.shape, data, info.byte_size};
    printf("input %s: %s, %zu bytes\n", info.name, kiln_dtype_name(info.dtype), info.byte_size);
  }
  for (size_t i = 0; i < output_count && !failed; ++i) {
    kiln_tensor_info_t info;
    failed = check(kiln_model_output_info(model, i, &info));
    outputs[i].name = info.name; /* data NULL: the session allocates */
  }

  kiln_session_t *session = NULL;
  if (!failed)
    failed = check(kiln_session_create(model, NULL, &session)) ||
             check(kiln_session_run(session, inputs, input_count, outputs, output_count));
  for (size_t i = 0; i < output_count && !failed; ++i) {
    double sum = 0;
    const float *data = outputs[i].data;
    for (size_t k = 0; k < outputs[i].byte_size / sizeof(float); ++k)
      sum += data[k];
    printf("output %s: %zu bytes, sum %.4f\n", outputs[i].name, outputs[i].byte_size, sum);
  }

  kiln_session_destroy(session);
  for (size_t i = 0; inputs && i < input_count; ++i)
    free(inputs[i].data);
  free(inputs);
  free(outputs);
  kiln_model_release(model);
  return failed;
}
