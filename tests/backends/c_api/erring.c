/* A backend that fails on demand. Y = X * 2 for INT32 input X, except:
 *
 *   - "fail_at" names the entry point that returns an error: for
 *     TRITONBACKEND_Initialize it is read from the backend config
 *     (--backend-config=erring,fail_at=Initialize), for ModelInitialize and
 *     ModelInstanceInitialize from the model's config parameter "fail_at".
 *     The message is "erring: <entry point> failed as asked".
 *   - With fail_at "ModelInstanceExecute", an execute whose batch holds a
 *     request with X[0] == 13 returns an error and leaves its requests to
 *     the host ("erring: ModelInstanceExecute failed as asked on 13").
 *   - A request with a negative X gets an INVALID_ARG error response
 *     ("erring: X must not be negative, got <x>"); the rest of the batch is
 *     answered.
 *
 * Config parameter "execute_delay_ms" makes each execute that long, so that
 * queued requests form batches. */
#include "backend_util.h"

struct model_state {
  bool fail_execute;
  long delay_ms;
};

/* The value of `key` among the model's config parameters, "" if none. */
static TRITONSERVER_Error* parameter(
    TRITONBACKEND_Model* model, const char* key, char* out, size_t cap)
{
  char* config;
  TRY(model_config_text(model, &config));
  if (config_parameter(config, key, out, cap) != 0) out[0] = '\0';
  free(config);
  return NULL;
}

static TRITONSERVER_Error* failed(const char* entry_point)
{
  return errorf(
      TRITONSERVER_ERROR_INTERNAL, "erring: %s failed as asked", entry_point);
}

TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  char* config;
  TRY(backend_config_text(backend, &config));
  char fail_at[64] = "";
  json_string(
      json_member(json_member(config, "cmdline"), "fail_at"), fail_at,
      sizeof fail_at);
  free(config);
  return strcmp(fail_at, "Initialize") == 0 ? failed("TRITONBACKEND_Initialize")
                                            : NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  char fail_at[64], delay[32];
  TRY(parameter(model, "fail_at", fail_at, sizeof fail_at));
  TRY(parameter(model, "execute_delay_ms", delay, sizeof delay));
  if (strcmp(fail_at, "ModelInitialize") == 0)
    return failed("TRITONBACKEND_ModelInitialize");
  struct model_state* state = calloc(1, sizeof *state);
  state->fail_execute = strcmp(fail_at, "ModelInstanceExecute") == 0;
  state->delay_ms = atol(delay);
  return set_model_state(model, state);
}

TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  return free_model_state(model);
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance* instance)
{
  TRITONBACKEND_Model* model;
  char fail_at[64];
  TRY(TRITONBACKEND_ModelInstanceModel(instance, &model));
  TRY(parameter(model, "fail_at", fail_at, sizeof fail_at));
  if (strcmp(fail_at, "ModelInstanceInitialize") == 0)
    return failed("TRITONBACKEND_ModelInstanceInitialize");
  return NULL;
}

/* X of one request, or an error response's error. */
static TRITONSERVER_Error* read_x(
    TRITONBACKEND_Request* request, struct tensor_in* x)
{
  TRY(read_input(request, "X", TRITONSERVER_TYPE_INT32, x));
  const int32_t* values = x->data;
  for (uint64_t i = 0; i < x->byte_size / sizeof(int32_t); i++)
    if (values[i] < 0) {
      const int32_t bad = values[i];
      free(x->data);
      x->data = NULL;
      return errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "erring: X must not be negative, got %d", bad);
    }
  return NULL;
}

/* Whether the batch asks ModelInstanceExecute to fail (X[0] == 13). */
static bool asks_to_fail(
    TRITONBACKEND_Request** requests, const uint32_t request_count)
{
  for (uint32_t r = 0; r < request_count; r++) {
    struct tensor_in x;
    if (!ok(read_input(requests[r], "X", TRITONSERVER_TYPE_INT32, &x)))
      continue;
    const bool thirteen =
        x.byte_size >= sizeof(int32_t) && ((const int32_t*)x.data)[0] == 13;
    free(x.data);
    if (thirteen) return true;
  }
  return false;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  struct model_state* state;
  TRY(instance_model_state(instance, (void**)&state));
  if (state->fail_execute && asks_to_fail(requests, request_count))
    return errorf(
        TRITONSERVER_ERROR_INTERNAL,
        "erring: ModelInstanceExecute failed as asked on 13");

  const uint64_t start = now_ns();
  if (state->delay_ms > 0) sleep_ms(state->delay_ms);
  uint64_t rows = 0;
  for (uint32_t r = 0; r < request_count; r++) {
    TRITONBACKEND_Request* request = requests[r];
    struct tensor_in x;
    TRITONBACKEND_Response* response = NULL;
    TRITONSERVER_Error* err = read_x(request, &x);
    if (err == NULL) err = TRITONBACKEND_ResponseNew(&response, request);
    if (err == NULL) {
      int32_t* y = x.data;
      const uint64_t n = x.byte_size / sizeof(int32_t);
      for (uint64_t i = 0; i < n; i++) y[i] *= 2;
      err = write_output(
          response, "Y", TRITONSERVER_TYPE_INT32, x.shape, x.dims, y,
          x.byte_size);
      rows += x.dims > 0 ? (uint64_t)x.shape[0] : 1;
    }
    free(x.data);
    ok(TRITONBACKEND_ModelInstanceReportStatistics(
        instance, request, err == NULL, start, start, now_ns(), now_ns()));
    respond_and_release(request, response, err);
  }
  if (rows > 0)
    ok(TRITONBACKEND_ModelInstanceReportBatchStatistics(
        instance, rows, start, start, now_ns(), now_ns()));
  return NULL;
}
