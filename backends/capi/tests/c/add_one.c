/* A small Triton backend for the loader's integration test, written against
 * the TRITONBACKEND API as tritonbackend.h declares it (declared for the
 * tests in tests/backends/c_api/triton_api.h, with the helpers of
 * backend_util.h there).
 *
 * OUT = IN + 1 (FP32, any shape). What it does besides depends on the
 * model's name:
 *   fail*      TRITONBACKEND_ModelInitialize fails;
 *   exec_fail* TRITONBACKEND_ModelInstanceExecute fails without touching
 *              its requests;
 *   hold*      execute keeps its requests: never answers, never releases;
 * and on its configuration: with "decoupled":true it sends two responses
 * per request from a response factory, then the final flag alone; with an
 * implicit state (input STATE_IN, output STATE_OUT) it accumulates:
 * OUT = STATE_OUT = IN + STATE_IN. A
 * negative first element gets an error response. With auto-complete on and
 * no output configured, it sets the configuration (IN, OUT, batch size 8).
 * Every response carries the parameters "batch" (the batch's size),
 * "backend_config" (TRITONBACKEND_BackendConfig's JSON) and "tag" (the
 * request's string parameter "tag", when it has one).
 */
#include "backend_util.h"

/* What a model knows of itself. */
typedef struct {
  bool decoupled;
  bool accumulates;
  int behaviour; /* 0 plain, 1 execute fails, 2 holds its requests */
} ModelState;

static const char* AUTO_COMPLETED =
    "{\"max_batch_size\":8,"
    "\"input\":[{\"name\":\"IN\",\"data_type\":\"TYPE_FP32\",\"dims\":[-1]}],"
    "\"output\":[{\"name\":\"OUT\",\"data_type\":\"TYPE_FP32\",\"dims\":[-1]}]}";

TRITONSERVER_Error*
TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  TRY(check_api_version("add_one"));
  char* config;
  TRY(backend_config_text(backend, &config));
  return TRITONBACKEND_BackendSetState(backend, config);
}

TRITONSERVER_Error*
TRITONBACKEND_Finalize(TRITONBACKEND_Backend* backend)
{
  void* state;
  TRY(TRITONBACKEND_BackendState(backend, &state));
  free(state);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  const char* name;
  TRY(TRITONBACKEND_ModelName(model, &name));
  if (strncmp(name, "fail", 4) == 0)
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "model '%s' refuses to load", name);
  char* json;
  TRY(model_config_text(model, &json));
  ModelState* state = calloc(1, sizeof *state);
  state->decoupled = strstr(json, "\"decoupled\":true") != NULL;
  state->accumulates = strstr(json, "\"input_name\":\"STATE_IN\"") != NULL;
  state->behaviour = strncmp(name, "exec_fail", 9) == 0 ? 1
                     : strncmp(name, "hold", 4) == 0    ? 2
                                                        : 0;
  bool has_output = strstr(json, "\"OUT\"") != NULL;
  free(json);
  TRY(set_model_state(model, state));

  bool auto_complete;
  TRY(TRITONBACKEND_ModelAutoCompleteConfig(model, &auto_complete));
  if (auto_complete && !has_output) {
    TRITONSERVER_Message* completed;
    TRY(TRITONSERVER_MessageNewFromSerializedJson(
        &completed, AUTO_COMPLETED, strlen(AUTO_COMPLETED)));
    TRITONSERVER_Error* err = TRITONBACKEND_ModelSetConfig(model, 1, completed);
    TRITONSERVER_MessageDelete(completed);
    if (err != NULL) return err;
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  return free_model_state(model);
}

/* The first float of input `name` of `request`. */
static TRITONSERVER_Error*
First(TRITONBACKEND_Request* request, const char* name, float* value)
{
  struct tensor_in in;
  TRY(read_input(request, name, TRITONSERVER_TYPE_FP32, &in));
  *value = in.byte_size >= sizeof(float) ? *(const float*)in.data : 0;
  free(in.data);
  return NULL;
}

/* OUT = STATE_OUT = IN + STATE_IN ([1, 1] each) for `response`. */
static TRITONSERVER_Error*
Accumulate(TRITONBACKEND_Response* response, TRITONBACKEND_Request* request)
{
  float in, before;
  TRY(First(request, "IN", &in));
  TRY(First(request, "STATE_IN", &before));
  const float sum = in + before;
  const int64_t shape[2] = {1, 1};
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  TRITONBACKEND_State* state;
  TRY(TRITONBACKEND_StateNew(
      &state, request, "STATE_OUT", TRITONSERVER_TYPE_FP32, shape, 2));
  void* state_buffer;
  TRY(TRITONBACKEND_StateBuffer(
      state, &state_buffer, sizeof sum, &memory_type, &memory_type_id));
  memcpy(state_buffer, &sum, sizeof sum);
  TRY(TRITONBACKEND_StateUpdate(state));
  TRITONBACKEND_Output* output;
  TRY(TRITONBACKEND_ResponseOutput(
      response, &output, "OUT", TRITONSERVER_TYPE_FP32, shape, 2));
  void* out_buffer;
  TRY(TRITONBACKEND_OutputBuffer(
      output, &out_buffer, sizeof sum, &memory_type, &memory_type_id));
  memcpy(out_buffer, &sum, sizeof sum);
  return NULL;
}

/* Adds OUT = IN + 1 and the parameters to `response`. */
static TRITONSERVER_Error*
Fill(
    TRITONBACKEND_Response* response, TRITONBACKEND_Request* request,
    uint32_t batch, const char* backend_config)
{
  TRITONBACKEND_Input* input;
  TRY(TRITONBACKEND_RequestInput(request, "IN", &input));
  const int64_t* shape;
  uint32_t dims;
  uint64_t byte_size;
  TRY(TRITONBACKEND_InputProperties(
      input, NULL, NULL, &shape, &dims, &byte_size, NULL));
  const void* buffer;
  uint64_t buffer_size;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  TRY(TRITONBACKEND_InputBuffer(
      input, 0, &buffer, &buffer_size, &memory_type, &memory_type_id));
  const float* in = buffer;
  size_t count = buffer_size / sizeof(float);
  if (count > 0 && in[0] < 0) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "negative input");
  }
  TRITONBACKEND_Output* output;
  TRY(TRITONBACKEND_ResponseOutput(
      response, &output, "OUT", TRITONSERVER_TYPE_FP32, shape, dims));
  void* out_buffer;
  TRY(TRITONBACKEND_OutputBuffer(
      output, &out_buffer, byte_size, &memory_type, &memory_type_id));
  float* out = out_buffer;
  for (size_t i = 0; i < count; ++i) out[i] = in[i] + 1;
  TRY(TRITONBACKEND_ResponseSetIntParameter(response, "batch", batch));
  TRY(TRITONBACKEND_ResponseSetStringParameter(
      response, "backend_config", backend_config));
  uint32_t parameters;
  TRY(TRITONBACKEND_RequestParameterCount(request, &parameters));
  for (uint32_t p = 0; p < parameters; ++p) {
    const char* key;
    TRITONSERVER_ParameterType type;
    const void* value;
    TRY(TRITONBACKEND_RequestParameter(request, p, &key, &type, &value));
    if (strcmp(key, "tag") == 0 && type == TRITONSERVER_PARAMETER_STRING) {
      TRY(TRITONBACKEND_ResponseSetStringParameter(response, "tag", value));
    }
  }
  return NULL;
}

/* Sends `response`, or `error` in its place when there is one. */
static void
Send(
    TRITONBACKEND_Response* response, uint32_t flags,
    TRITONSERVER_Error* error)
{
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseSend(response, flags, error);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  if (error != NULL) TRITONSERVER_ErrorDelete(error);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  TRITONBACKEND_Model* model;
  TRY(TRITONBACKEND_ModelInstanceModel(instance, &model));
  ModelState* state;
  TRY(TRITONBACKEND_ModelState(model, (void**)&state));
  if (state->behaviour == 1) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "execute failed on purpose");
  }
  if (state->behaviour == 2) {
    return NULL;
  }
  TRITONBACKEND_Backend* backend;
  TRY(TRITONBACKEND_ModelBackend(model, &backend));
  const char* backend_config;
  TRY(TRITONBACKEND_BackendState(backend, (void**)&backend_config));

  for (uint32_t r = 0; r < request_count; ++r) {
    TRITONBACKEND_Request* request = requests[r];
    if (state->decoupled) {
      TRITONBACKEND_ResponseFactory* factory;
      TRY(TRITONBACKEND_ResponseFactoryNew(&factory, request));
      for (int i = 0; i < 2; ++i) {
        TRITONBACKEND_Response* response;
        TRY(TRITONBACKEND_ResponseNewFromFactory(&response, factory));
        Send(
            response, 0,
            Fill(response, request, request_count, backend_config));
      }
      TRY(TRITONBACKEND_ResponseFactorySendFlags(
          factory, TRITONSERVER_RESPONSE_COMPLETE_FINAL));
      TRY(TRITONBACKEND_ResponseFactoryDelete(factory));
    } else {
      TRITONBACKEND_Response* response;
      TRY(TRITONBACKEND_ResponseNew(&response, request));
      TRITONSERVER_Error* error =
          state->accumulates
              ? Accumulate(response, request)
              : Fill(response, request, request_count, backend_config);
      TRY(TRITONBACKEND_ModelInstanceReportStatistics(
          instance, request, error == NULL, 1, 2, 3, 4));
      Send(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, error);
    }
  }
  TRY(TRITONBACKEND_ModelInstanceReportBatchStatistics(
      instance, request_count, 1, 2, 3, 4));
  for (uint32_t r = 0; r < request_count; ++r) {
    TRY(TRITONBACKEND_RequestRelease(
        requests[r], TRITONSERVER_REQUEST_RELEASE_ALL));
  }
  return NULL;
}
