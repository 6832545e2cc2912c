// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* kiln runtime: load a compiled .kiln model and run it.
 *
 * A plain C API. Every call that can fail returns a kiln_status_t: NULL means
 * success; otherwise the status holds a code and a message and must be freed
 * with kiln_status_free. Results are written through out_ parameters. No call
 * aborts, exits or lets an exception escape.
 *
 * Threads: a kiln_model_t is immutable once loaded and may be shared by any
 * number of threads (retain/release are atomic). A kiln_session_t belongs to
 * one caller at a time.
 *
 *   kiln_model_t *model;
 *   kiln_status_t status = kiln_model_load_file("model.kiln", NULL, &model);
 *   kiln_session_t *session;
 *   status = kiln_session_create(model, NULL, &session);
 *   kiln_tensor_t input = {"input", KILN_DTYPE_F32, 4, shape, data, bytes};
 *   kiln_tensor_t output = {"output"};          // data NULL: kiln allocates
 *   status = kiln_session_run(session, &input, 1, &output, 1);
 *   kiln_session_destroy(session);
 *   kiln_model_release(model);
 */
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_API __attribute__((visibility("default")))

/* The version of this API; options structs carry it so the ABI can grow. */
#define KILN_API_VERSION 7u

/* ---- Status ------------------------------------------------------------ */

typedef enum kiln_status_code_t {
  KILN_STATUS_OK = 0,
  KILN_STATUS_INVALID_ARGUMENT = 1,   /* a NULL pointer, a wrong name, shape, dtype or size */
  KILN_STATUS_NOT_FOUND = 2,          /* a file or name that does not exist */
  KILN_STATUS_DATA_LOSS = 3,          /* a truncated or corrupt artifact */
  KILN_STATUS_UNIMPLEMENTED = 4,      /* a newer format, or something this runtime lacks */
  KILN_STATUS_UNAVAILABLE = 5,        /* a device or CPU that cannot run the model */
  KILN_STATUS_RESOURCE_EXHAUSTED = 6, /* out of memory */
  KILN_STATUS_INTERNAL = 7,
  KILN_STATUS_PERMISSION_DENIED = 8, /* an artifact whose signature fails or is not trusted */
} kiln_status_code_t;

typedef struct kiln_status_s *kiln_status_t;

/* The code of `status`; KILN_STATUS_OK for NULL. */
KILN_API kiln_status_code_t kiln_status_code(kiln_status_t status);
/* The message of `status` ("" for NULL), valid until the status is freed. */
KILN_API const char *kiln_status_message(kiln_status_t status);
/* Frees `status`; NULL is allowed. */
KILN_API void kiln_status_free(kiln_status_t status);

/* ---- Tensors ----------------------------------------------------------- */

typedef enum kiln_dtype_t {
  KILN_DTYPE_F32,
  KILN_DTYPE_F16,
  KILN_DTYPE_BF16,
  KILN_DTYPE_F64,
  KILN_DTYPE_I8,
  KILN_DTYPE_I16,
  KILN_DTYPE_I32,
  KILN_DTYPE_I64,
  KILN_DTYPE_U8,
  KILN_DTYPE_U16,
  KILN_DTYPE_U32,
  KILN_DTYPE_U64,
  KILN_DTYPE_BOOL,
  KILN_DTYPE_F8E4M3FN,
  KILN_DTYPE_F8E5M2,
} kiln_dtype_t;

/* The size of one element in bytes; 0 for an unknown dtype. */
KILN_API size_t kiln_dtype_size(kiln_dtype_t dtype);
/* The dtype's name ("f32", ...); "unknown" for an unknown dtype. */
KILN_API const char *kiln_dtype_name(kiln_dtype_t dtype);

/* A model's input or output. Pointers stay valid while the model lives.
 * Since API version 7, a dimension the model takes at run time (a symbolic
 * one: kiln_model_input_dim names it) is -1 in `shape`, and `byte_size` is
 * the tensor's size at its symbols' largest values. */
typedef struct kiln_tensor_info_t {
  const char *name;
  kiln_dtype_t dtype;
  size_t rank;
  const int64_t *shape;
  size_t byte_size;
} kiln_tensor_info_t;

/* A tensor passed to or returned by kiln_session_run. */
typedef struct kiln_tensor_t {
  const char *name;
  kiln_dtype_t dtype;
  size_t rank;
  const int64_t *shape;
  void *data;
  size_t byte_size;
} kiln_tensor_t;

/* ---- Models ------------------------------------------------------------ */

typedef struct kiln_model_s kiln_model_t;

/* Verify and describe the model without loading its code (as kiln inspect
 * does): nothing in the file runs, and sessions cannot be created. */
#define KILN_MODEL_LOAD_NO_CODE 1u

typedef struct kiln_model_options_t {
  uint32_t api_version; /* KILN_API_VERSION */
  uint32_t flags;       /* KILN_MODEL_LOAD_* */
  /* Since API version 5: Ed25519 public keys, 32 bytes each, back to back.
   * When trusted_key_count is not 0, only an artifact signed by one of them
   * loads: an unsigned one, or one signed by another key, is refused before
   * anything but its header and digest is read. */
  const uint8_t *trusted_keys;
  size_t trusted_key_count;
} kiln_model_options_t;

/* Loads and verifies the artifact at `path`, and loads its host code if it
 * has any. Verifying checks the SHA-256 digest of the whole file, its
 * signature (if signed; against the trusted keys, if given), the manifest,
 * every offset, size and count in it against each other and the file, and
 * that the host code was compiled for what the manifest says. Its weights
 * are mapped, not copied. `options` may be NULL. Errors: NOT_FOUND,
 * DATA_LOSS (truncated, corrupt or inconsistent), PERMISSION_DENIED (a
 * signature that fails, or an artifact no trusted key signed),
 * UNIMPLEMENTED (another format version), UNAVAILABLE (host code only, for
 * a CPU level this machine lacks), INVALID_ARGUMENT (NULL pointers). On
 * success *out_model holds one reference. */
KILN_API kiln_status_t kiln_model_load_file(const char *path, const kiln_model_options_t *options,
                                            kiln_model_t **out_model);

/* The same from `size` bytes at `data`, which are copied. */
KILN_API kiln_status_t kiln_model_load_memory(const void *data, size_t size,
                                              const kiln_model_options_t *options,
                                              kiln_model_t **out_model);

/* Adds or drops a reference; the last release frees the model. NULL is
 * allowed. Thread-safe. */
KILN_API void kiln_model_retain(kiln_model_t *model);
KILN_API void kiln_model_release(kiln_model_t *model);

KILN_API size_t kiln_model_input_count(const kiln_model_t *model);
KILN_API size_t kiln_model_output_count(const kiln_model_t *model);
/* Describes input or output `index`. Errors: INVALID_ARGUMENT. */
KILN_API kiln_status_t kiln_model_input_info(const kiln_model_t *model, size_t index,
                                             kiln_tensor_info_t *out_info);
KILN_API kiln_status_t kiln_model_output_info(const kiln_model_t *model, size_t index,
                                              kiln_tensor_info_t *out_info);
/* Bytes of activation memory a host session of this model allocates (with
 * no host code, the first plan's). */
KILN_API uint64_t kiln_model_arena_bytes(const kiln_model_t *model);
/* Since API version 6: the targets the model has code for, each once, in
 * the artifact's order, as `kiln inspect` names its plans: "x86-64-v3",
 * "sm_90a", "gfx942". The count is 0 for NULL; a name is NULL past the
 * end, and valid while the model lives. */
KILN_API size_t kiln_model_target_count(const kiln_model_t *model);
KILN_API const char *kiln_model_target(const kiln_model_t *model, size_t index);

/* Since API version 7: a symbol, a size the model takes at run time (a
 * batch, a sequence length), which the inputs' dimensions give. Every run's
 * value lies in [min, max]; `opt` is the value its code was tuned for. */
typedef struct kiln_symbol_info_t {
  const char *name;
  int64_t min, max, opt;
} kiln_symbol_info_t;

KILN_API size_t kiln_model_symbol_count(const kiln_model_t *model);
/* Describes symbol `index`. Errors: INVALID_ARGUMENT. */
KILN_API kiln_status_t kiln_model_symbol_info(const kiln_model_t *model, size_t index,
                                              kiln_symbol_info_t *out_info);
/* Since API version 7: dimension `dim` of input or output `index` as an
 * expression of the symbols ("batch", "past + sequence"); NULL for a static
 * dimension or an index or dimension out of range. Valid while the model
 * lives. */
KILN_API const char *kiln_model_input_dim(const kiln_model_t *model, size_t index, size_t dim);
KILN_API const char *kiln_model_output_dim(const kiln_model_t *model, size_t index, size_t dim);

/* ---- Sessions ---------------------------------------------------------- */

typedef struct kiln_session_s kiln_session_t;

/* On a GPU, launch the plan kernel by kernel instead of replaying it as one
 * graph (a CUDA graph on cuda:N, a HIP graph on hip:N). No effect on the
 * host. */
#define KILN_SESSION_NO_GRAPH 1u
/* Its older name, kept so existing callers still build. */
#define KILN_SESSION_NO_CUDA_GRAPH KILN_SESSION_NO_GRAPH
/* Since API version 4: time each kernel of every run
 * (kiln_session_kernel_profile). On a GPU the plan then runs kernel by
 * kernel, an event recorded before each, not as one CUDA graph: each launch
 * costs a few microseconds more. On the host (artifacts of format version 5
 * and later) the code reports the end of each kernel, read from a
 * monotonic clock: well under a microsecond a kernel. */
#define KILN_SESSION_PROFILE 2u

typedef struct kiln_session_options_t {
  uint32_t api_version; /* KILN_API_VERSION */
  /* "host" (the default when NULL), "cuda:N" (the Nth NVIDIA GPU; "cuda"
   * is cuda:0) or "hip:N" (the Nth AMD GPU; "hip" is hip:0). */
  const char *device;
  /* Since API version 2: the threads a host run uses, the calling thread
   * among them; 0 (the default) means one per CPU this process may run on. */
  uint32_t threads;
  /* Since API version 3: KILN_SESSION_* flags. */
  uint32_t flags;
} kiln_session_options_t;

/* Creates a session that runs `model` on a device, with its own activation
 * arena. The session holds a reference to the model. `options` may be NULL.
 *
 * On "cuda:N" the CUDA driver (libcuda.so.1) is opened on first use. The
 * model's code for the GPU's architecture is loaded: a cubin built for it
 * when the artifact has one, else PTX that the driver compiles. The weights
 * are uploaded once per model and GPU, and shared by its sessions there.
 * The session allocates its device memory (arena, inputs, outputs) in one
 * piece, and captures the plan once as a CUDA graph that every run replays
 * (unless KILN_SESSION_NO_GRAPH).
 *
 * On "hip:N" the HIP runtime (libamdhip64.so, .so.6 or .so.5) is opened on
 * first use, the code object for the GPU's architecture (gfx90a, gfx942,
 * ...) is loaded, and the rest is as on "cuda:N", with a HIP graph.
 *
 * Errors: INVALID_ARGUMENT, UNAVAILABLE (an unknown device, one this runtime
 * or machine cannot use: no driver, no such GPU, no code in the artifact
 * for its architecture; or a model loaded without its code),
 * RESOURCE_EXHAUSTED (host or GPU memory). */
KILN_API kiln_status_t kiln_session_create(kiln_model_t *model,
                                           const kiln_session_options_t *options,
                                           kiln_session_t **out_session);
/* Frees the session and any outputs it allocated. NULL is allowed. */
KILN_API void kiln_session_destroy(kiln_session_t *session);
/* The threads the session's host runs use (the calling thread among them). */
KILN_API uint32_t kiln_session_threads(const kiln_session_t *session);
/* What the session runs on: "host (x86-64-v4)", "cuda:0 (NVIDIA H200,
 * sm_90, cubin for sm_90)" or "hip:0 (AMD Instinct MI300X, gfx942, code
 * object for gfx942)". Valid while the session lives. */
KILN_API const char *kiln_session_device(const kiln_session_t *session);
/* Since API version 4: the target whose code the session runs, as `kiln
 * inspect` names its plan: "x86-64-v3" on the host, "sm_90a" on an H100
 * given code for sm_90 and sm_90a. Valid while the session lives. */
KILN_API const char *kiln_session_target(const kiln_session_t *session);

/* Runs the model. `inputs` name every model input exactly once, with its
 * dtype and shape and byte_size bytes at data. A symbolic dimension takes
 * any value in its symbol's range, the same wherever the symbol appears;
 * other dimensions (`past + sequence`) must be what the run's symbol values
 * make them. `outputs` name model outputs; one with data set is written in
 * place (dtype, shape at this run's symbol values, and byte_size must
 * match); one with data NULL gets a buffer the session owns until its next
 * run or its destruction, and its dtype, rank, shape (this run's; for a
 * symbolic output, held by the session until its next run) and byte_size
 * are filled in. The next run writes that output into the same buffer again (passing it
 * back in as an input is allowed: that run then writes elsewhere), so copy
 * what must outlive it. A buffer the session owns cannot be an in-place
 * output (the session frees it). Errors: INVALID_ARGUMENT (NULL pointers,
 * unknown, missing or repeated names, wrong dtypes, shapes or sizes, a
 * session-owned buffer as an in-place output, a symbol's value out of its
 * range or given two values), RESOURCE_EXHAUSTED, INTERNAL
 * (a GPU kernel failed; the session cannot run again). */
KILN_API kiln_status_t kiln_session_run(kiln_session_t *session, const kiln_tensor_t *inputs,
                                        size_t input_count, kiln_tensor_t *outputs,
                                        size_t output_count);

/* Since API version 3: starts a run as kiln_session_run does and returns
 * before it ends. The inputs have been read when it returns, and `outputs`
 * filled in as kiln_session_run fills them; the output buffers hold the
 * results once the next kiln_session_wait returns without error. One run
 * is in flight per session: starting another waits for the one before. On
 * the host the run ends before this returns. */
KILN_API kiln_status_t kiln_session_run_async(kiln_session_t *session, const kiln_tensor_t *inputs,
                                              size_t input_count, kiln_tensor_t *outputs,
                                              size_t output_count);
/* Waits for the session's run in flight, if any; its error, if it had one. */
KILN_API kiln_status_t kiln_session_wait(kiln_session_t *session);

/* Since API version 3: how long the last finished run's kernels took on the
 * device, in milliseconds, as the GPU timed them (without the copies of
 * inputs and outputs); 0 on the host and before the first run. */
KILN_API double kiln_session_kernel_milliseconds(const kiln_session_t *session);

/* Since API version 4: with KILN_SESSION_PROFILE, how long each kernel of
 * the last finished run took, in milliseconds, in plan order (the order
 * `kiln inspect` lists them in). Writes the first min(count, kernels) times
 * to `milliseconds` (which may be NULL when count is 0) and returns the
 * number of kernels; 0 without the flag, before the first run, and on the
 * host for artifacts older than format version 5. */
KILN_API size_t kiln_session_kernel_profile(const kiln_session_t *session, double *milliseconds,
                                            size_t count);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H */
