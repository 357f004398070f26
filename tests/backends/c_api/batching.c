/* A batching backend: FP32 INPUT0 and INPUT1 of one shape [rows, ...] give
 * OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1.
 *
 * Each execute gathers the whole batch into one buffer, computes it in one
 * pass and scatters the rows back to the requests; it reports statistics
 * per request and per batch, and writes only the outputs a request asked
 * for. A request whose inputs are unusable gets an error response; the rest
 * of the batch is served.
 *
 * Config: max_batch_size must be > 0. Parameter "execute_delay_ms" makes
 * each execute that long (so that queued requests form batches). With
 * auto-complete on, a configuration without inputs gets INPUT0/INPUT1 and
 * OUTPUT0/OUTPUT1, FP32, dims [-1]. */
#include "backend_util.h"

struct model_state {
  long delay_ms;
};

TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  (void)backend;
  return check_api_version("batching");
}

/* Appends `text` to the growing string `*buf` (of `*len` bytes). */
static void append(char** buf, size_t* len, const char* text, size_t n)
{
  *buf = realloc(*buf, *len + n + 1);
  memcpy(*buf + *len, text, n);
  *len += n;
  (*buf)[*len] = '\0';
}

struct rewrite {
  char* out;
  size_t len;
};

/* Copies every member of the configuration but "input" and "output". */
static int copy_other_members(
    const char* key, size_t key_len, const char* value, const char* end,
    void* ctx)
{
  struct rewrite* r = ctx;
  if ((key_len == 5 && strncmp(key, "input", 5) == 0) ||
      (key_len == 6 && strncmp(key, "output", 6) == 0))
    return 0;
  append(&r->out, &r->len, ",\"", 2);
  append(&r->out, &r->len, key, key_len);
  append(&r->out, &r->len, "\":", 2);
  append(&r->out, &r->len, value, (size_t)(end - value));
  return 0;
}

#define TENSOR(name) \
  "{\"name\":\"" name "\",\"data_type\":\"TYPE_FP32\",\"dims\":[-1]}"

/* Fills in the inputs and outputs of a configuration that has none. */
static TRITONSERVER_Error* auto_complete(
    TRITONBACKEND_Model* model, const char* config)
{
  static const char io[] =
      "{\"input\":[" TENSOR("INPUT0") "," TENSOR("INPUT1") "],"
      "\"output\":[" TENSOR("OUTPUT0") "," TENSOR("OUTPUT1") "]";
  struct rewrite r = {NULL, 0};
  append(&r.out, &r.len, io, strlen(io));
  if (json_members(config, copy_other_members, &r) != 0) {
    free(r.out);
    return errorf(
        TRITONSERVER_ERROR_INTERNAL, "batching: unreadable config: %s",
        config);
  }
  append(&r.out, &r.len, "}", 1);
  TRITONSERVER_Message* message;
  TRITONSERVER_Error* err =
      TRITONSERVER_MessageNewFromSerializedJson(&message, r.out, r.len);
  free(r.out);
  if (err != NULL) return err;
  err = TRITONBACKEND_ModelSetConfig(model, 1, message);
  TRITONSERVER_MessageDelete(message);
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  char* config;
  TRY(model_config_text(model, &config));
  TRITONSERVER_Error* err = NULL;
  bool complete = false;
  err = TRITONBACKEND_ModelAutoCompleteConfig(model, &complete);
  if (err == NULL && complete &&
      json_array_len(json_member(config, "input")) == 0)
    err = auto_complete(model, config);
  if (err == NULL && json_int(json_member(config, "max_batch_size"), 0) <= 0)
    err = errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "batching: the model must batch (max_batch_size > 0)");
  if (err == NULL) {
    struct model_state* state = calloc(1, sizeof *state);
    char delay[32];
    if (config_parameter(config, "execute_delay_ms", delay, sizeof delay) == 0)
      state->delay_ms = atol(delay);
    err = set_model_state(model, state);
  }
  free(config);
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  return free_model_state(model);
}

/* One request of the batch: its inputs, where its rows start in the batch
 * buffers, or why it cannot run. */
struct item {
  TRITONBACKEND_Request* request;
  struct tensor_in a, b;
  uint64_t rows, offset, count;
  TRITONSERVER_Error* err;
};

static TRITONSERVER_Error* read_item(struct item* it)
{
  TRY(read_input(it->request, "INPUT0", TRITONSERVER_TYPE_FP32, &it->a));
  TRY(read_input(it->request, "INPUT1", TRITONSERVER_TYPE_FP32, &it->b));
  if (it->a.byte_size != it->b.byte_size || it->a.dims != it->b.dims ||
      it->a.dims == 0)
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "batching: INPUT0 and INPUT1 must have one shape with a batch "
        "dimension");
  for (uint32_t d = 0; d < it->a.dims; d++)
    if (it->a.shape[d] != it->b.shape[d])
      return errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "batching: INPUT0 and INPUT1 differ in dimension %u", d);
  it->rows = (uint64_t)it->a.shape[0];
  it->count = it->a.byte_size / sizeof(float);
  return NULL;
}

static TRITONSERVER_Error* respond(
    struct item* it, const float* sum, const float* diff)
{
  TRITONBACKEND_Response* response;
  TRY(TRITONBACKEND_ResponseNew(&response, it->request));
  TRITONSERVER_Error* err = NULL;
  const uint64_t bytes = it->count * sizeof(float);
  if (output_requested(it->request, "OUTPUT0"))
    err = write_output(
        response, "OUTPUT0", TRITONSERVER_TYPE_FP32, it->a.shape, it->a.dims,
        sum + it->offset, bytes);
  if (err == NULL && output_requested(it->request, "OUTPUT1"))
    err = write_output(
        response, "OUTPUT1", TRITONSERVER_TYPE_FP32, it->a.shape, it->a.dims,
        diff + it->offset, bytes);
  ok(TRITONBACKEND_ResponseSend(
      response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err));
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  const uint64_t exec_start = now_ns();
  struct model_state* state;
  TRY(instance_model_state(instance, (void**)&state));

  struct item* items = calloc(request_count, sizeof *items);
  uint64_t total = 0, rows = 0;
  for (uint32_t r = 0; r < request_count; r++) {
    items[r].request = requests[r];
    items[r].err = read_item(&items[r]);
    if (items[r].err == NULL) {
      items[r].offset = total;
      total += items[r].count;
      rows += items[r].rows;
    }
  }

  /* The whole batch in one buffer, computed in one pass. */
  const uint64_t compute_start = now_ns();
  if (state->delay_ms > 0) sleep_ms(state->delay_ms);
  float* in0 = malloc((total ? total : 1) * sizeof(float));
  float* in1 = malloc((total ? total : 1) * sizeof(float));
  float* sum = malloc((total ? total : 1) * sizeof(float));
  float* diff = malloc((total ? total : 1) * sizeof(float));
  for (uint32_t r = 0; r < request_count; r++) {
    if (items[r].err != NULL) continue;
    memcpy(in0 + items[r].offset, items[r].a.data, items[r].a.byte_size);
    memcpy(in1 + items[r].offset, items[r].b.data, items[r].b.byte_size);
  }
  for (uint64_t i = 0; i < total; i++) {
    sum[i] = in0[i] + in1[i];
    diff[i] = in0[i] - in1[i];
  }
  const uint64_t compute_end = now_ns();

  for (uint32_t r = 0; r < request_count; r++) {
    struct item* it = &items[r];
    bool success = false;
    if (it->err == NULL) {
      TRITONSERVER_Error* err = respond(it, sum, diff);
      success = (err == NULL);
      if (err != NULL) TRITONSERVER_ErrorDelete(err);
    } else {
      TRITONBACKEND_Response* response;
      if (ok(TRITONBACKEND_ResponseNew(&response, it->request)))
        ok(TRITONBACKEND_ResponseSend(
            response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, it->err));
      TRITONSERVER_ErrorDelete(it->err);
    }
    ok(TRITONBACKEND_ModelInstanceReportStatistics(
        instance, it->request, success, exec_start, compute_start,
        compute_end, now_ns()));
    ok(TRITONBACKEND_RequestRelease(
        it->request, TRITONSERVER_REQUEST_RELEASE_ALL));
    free(it->a.data);
    free(it->b.data);
  }
  if (rows > 0)
    ok(TRITONBACKEND_ModelInstanceReportBatchStatistics(
        instance, rows, exec_start, compute_start, compute_end, now_ns()));
  free(in0);
  free(in1);
  free(sum);
  free(diff);
  free(items);
  return NULL;
}
