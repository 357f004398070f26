/* A small Triton backend for the loader's integration test, written against
 * the TRITONBACKEND API as tritonbackend.h declares it (the declarations it
 * needs are repeated here so that the test needs no Triton headers).
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_Message TRITONSERVER_Message;
typedef struct TRITONBACKEND_Backend TRITONBACKEND_Backend;
typedef struct TRITONBACKEND_Model TRITONBACKEND_Model;
typedef struct TRITONBACKEND_ModelInstance TRITONBACKEND_ModelInstance;
typedef struct TRITONBACKEND_Request TRITONBACKEND_Request;
typedef struct TRITONBACKEND_Input TRITONBACKEND_Input;
typedef struct TRITONBACKEND_Response TRITONBACKEND_Response;
typedef struct TRITONBACKEND_ResponseFactory TRITONBACKEND_ResponseFactory;
typedef struct TRITONBACKEND_Output TRITONBACKEND_Output;
typedef struct TRITONBACKEND_State TRITONBACKEND_State;

enum { ERROR_INTERNAL = 1, ERROR_INVALID_ARG = 3, ERROR_UNSUPPORTED = 5 };
enum { TYPE_FP32 = 11 };
enum { PARAMETER_STRING = 0 };
enum { RELEASE_ALL = 1, RESPONSE_FINAL = 1 };

TRITONSERVER_Error* TRITONSERVER_ErrorNew(int code, const char* msg);
void TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error);
TRITONSERVER_Error* TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message** message, const char* base, size_t byte_size);
TRITONSERVER_Error* TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message* message, const char** base, size_t* byte_size);
TRITONSERVER_Error* TRITONSERVER_MessageDelete(TRITONSERVER_Message* message);
TRITONSERVER_Error* TRITONBACKEND_ApiVersion(uint32_t* major, uint32_t* minor);
TRITONSERVER_Error* TRITONBACKEND_BackendConfig(
    TRITONBACKEND_Backend* backend, TRITONSERVER_Message** config);
TRITONSERVER_Error* TRITONBACKEND_BackendSetState(
    TRITONBACKEND_Backend* backend, void* state);
TRITONSERVER_Error* TRITONBACKEND_BackendState(
    TRITONBACKEND_Backend* backend, void** state);
TRITONSERVER_Error* TRITONBACKEND_ModelName(
    TRITONBACKEND_Model* model, const char** name);
TRITONSERVER_Error* TRITONBACKEND_ModelBackend(
    TRITONBACKEND_Model* model, TRITONBACKEND_Backend** backend);
TRITONSERVER_Error* TRITONBACKEND_ModelConfig(
    TRITONBACKEND_Model* model, uint32_t version, TRITONSERVER_Message** config);
TRITONSERVER_Error* TRITONBACKEND_ModelAutoCompleteConfig(
    TRITONBACKEND_Model* model, bool* auto_complete);
TRITONSERVER_Error* TRITONBACKEND_ModelSetConfig(
    TRITONBACKEND_Model* model, uint32_t version, TRITONSERVER_Message* config);
TRITONSERVER_Error* TRITONBACKEND_ModelSetState(
    TRITONBACKEND_Model* model, void* state);
TRITONSERVER_Error* TRITONBACKEND_ModelState(
    TRITONBACKEND_Model* model, void** state);
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Model** model);
TRITONSERVER_Error* TRITONBACKEND_RequestInput(
    TRITONBACKEND_Request* request, const char* name,
    TRITONBACKEND_Input** input);
TRITONSERVER_Error* TRITONBACKEND_RequestParameterCount(
    TRITONBACKEND_Request* request, uint32_t* count);
TRITONSERVER_Error* TRITONBACKEND_RequestParameter(
    TRITONBACKEND_Request* request, uint32_t index, const char** key,
    int* type, const void** value);
TRITONSERVER_Error* TRITONBACKEND_RequestRelease(
    TRITONBACKEND_Request* request, uint32_t flags);
TRITONSERVER_Error* TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input* input, const char** name, int* datatype,
    const int64_t** shape, uint32_t* dims_count, uint64_t* byte_size,
    uint32_t* buffer_count);
TRITONSERVER_Error* TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input* input, uint32_t index, const void** buffer,
    uint64_t* byte_size, int* memory_type, int64_t* memory_type_id);
TRITONSERVER_Error* TRITONBACKEND_ResponseNew(
    TRITONBACKEND_Response** response, TRITONBACKEND_Request* request);
TRITONSERVER_Error* TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory** factory, TRITONBACKEND_Request* request);
TRITONSERVER_Error* TRITONBACKEND_ResponseFactoryDelete(
    TRITONBACKEND_ResponseFactory* factory);
TRITONSERVER_Error* TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory* factory, uint32_t flags);
TRITONSERVER_Error* TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response** response, TRITONBACKEND_ResponseFactory* factory);
TRITONSERVER_Error* TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response* response, TRITONBACKEND_Output** output,
    const char* name, int datatype, const int64_t* shape, uint32_t dims_count);
TRITONSERVER_Error* TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output* output, void** buffer, uint64_t byte_size,
    int* memory_type, int64_t* memory_type_id);
TRITONSERVER_Error* TRITONBACKEND_ResponseSetIntParameter(
    TRITONBACKEND_Response* response, const char* name, int64_t value);
TRITONSERVER_Error* TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response* response, const char* name, const char* value);
TRITONSERVER_Error* TRITONBACKEND_ResponseSend(
    TRITONBACKEND_Response* response, uint32_t flags,
    TRITONSERVER_Error* error);
TRITONSERVER_Error* TRITONBACKEND_StateNew(
    TRITONBACKEND_State** state, TRITONBACKEND_Request* request,
    const char* name, int datatype, const int64_t* shape, uint32_t dims_count);
TRITONSERVER_Error* TRITONBACKEND_StateBuffer(
    TRITONBACKEND_State* state, void** buffer, uint64_t byte_size,
    int* memory_type, int64_t* memory_type_id);
TRITONSERVER_Error* TRITONBACKEND_StateUpdate(TRITONBACKEND_State* state);
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request* request,
    bool success, uint64_t exec_start, uint64_t compute_start,
    uint64_t compute_end, uint64_t exec_end);
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance* instance, uint64_t batch_size,
    uint64_t exec_start, uint64_t compute_start, uint64_t compute_end,
    uint64_t exec_end);

#define RETURN_IF_ERROR(call)            \
  do {                                   \
    TRITONSERVER_Error* err__ = (call);  \
    if (err__ != NULL) return err__;     \
  } while (0)

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
  uint32_t major, minor;
  RETURN_IF_ERROR(TRITONBACKEND_ApiVersion(&major, &minor));
  if (major != 1 || minor < 19) {
    return TRITONSERVER_ErrorNew(
        ERROR_UNSUPPORTED,
        "triton backend API version does not support this backend");
  }
  TRITONSERVER_Message* config;
  RETURN_IF_ERROR(TRITONBACKEND_BackendConfig(backend, &config));
  const char* json;
  size_t size;
  RETURN_IF_ERROR(TRITONSERVER_MessageSerializeToJson(config, &json, &size));
  char* copy = malloc(size + 1);
  memcpy(copy, json, size);
  copy[size] = '\0';
  return TRITONBACKEND_BackendSetState(backend, copy);
}

TRITONSERVER_Error*
TRITONBACKEND_Finalize(TRITONBACKEND_Backend* backend)
{
  void* state;
  RETURN_IF_ERROR(TRITONBACKEND_BackendState(backend, &state));
  free(state);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  const char* name;
  RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  if (strncmp(name, "fail", 4) == 0) {
    char message[256];
    snprintf(message, sizeof message, "model '%s' refuses to load", name);
    return TRITONSERVER_ErrorNew(ERROR_INVALID_ARG, message);
  }
  TRITONSERVER_Message* config;
  RETURN_IF_ERROR(TRITONBACKEND_ModelConfig(model, 1, &config));
  const char* json;
  size_t size;
  RETURN_IF_ERROR(TRITONSERVER_MessageSerializeToJson(config, &json, &size));
  ModelState* state = calloc(1, sizeof *state);
  state->decoupled = strstr(json, "\"decoupled\":true") != NULL;
  state->accumulates = strstr(json, "\"input_name\":\"STATE_IN\"") != NULL;
  state->behaviour = strncmp(name, "exec_fail", 9) == 0 ? 1
                     : strncmp(name, "hold", 4) == 0    ? 2
                                                        : 0;
  bool has_output = strstr(json, "\"OUT\"") != NULL;
  RETURN_IF_ERROR(TRITONSERVER_MessageDelete(config));
  RETURN_IF_ERROR(TRITONBACKEND_ModelSetState(model, state));

  bool auto_complete;
  RETURN_IF_ERROR(TRITONBACKEND_ModelAutoCompleteConfig(model, &auto_complete));
  if (auto_complete && !has_output) {
    TRITONSERVER_Message* completed;
    RETURN_IF_ERROR(TRITONSERVER_MessageNewFromSerializedJson(
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
  void* state;
  RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &state));
  free(state);
  return NULL;
}

/* The first float of input `name` of `request`. */
static TRITONSERVER_Error*
First(TRITONBACKEND_Request* request, const char* name, float* value)
{
  TRITONBACKEND_Input* input;
  RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, name, &input));
  const void* buffer;
  uint64_t size;
  int memory_type = 0;
  int64_t memory_type_id = 0;
  RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(
      input, 0, &buffer, &size, &memory_type, &memory_type_id));
  *value = size >= sizeof(float) ? *(const float*)buffer : 0;
  return NULL;
}

/* OUT = STATE_OUT = IN + STATE_IN ([1, 1] each) for `response`. */
static TRITONSERVER_Error*
Accumulate(TRITONBACKEND_Response* response, TRITONBACKEND_Request* request)
{
  float in, before;
  RETURN_IF_ERROR(First(request, "IN", &in));
  RETURN_IF_ERROR(First(request, "STATE_IN", &before));
  const float sum = in + before;
  const int64_t shape[2] = {1, 1};
  int memory_type = 0;
  int64_t memory_type_id = 0;
  TRITONBACKEND_State* state;
  RETURN_IF_ERROR(
      TRITONBACKEND_StateNew(&state, request, "STATE_OUT", TYPE_FP32, shape, 2));
  void* state_buffer;
  RETURN_IF_ERROR(TRITONBACKEND_StateBuffer(
      state, &state_buffer, sizeof sum, &memory_type, &memory_type_id));
  memcpy(state_buffer, &sum, sizeof sum);
  RETURN_IF_ERROR(TRITONBACKEND_StateUpdate(state));
  TRITONBACKEND_Output* output;
  RETURN_IF_ERROR(
      TRITONBACKEND_ResponseOutput(response, &output, "OUT", TYPE_FP32, shape, 2));
  void* out_buffer;
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
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
  RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, "IN", &input));
  const int64_t* shape;
  uint32_t dims;
  uint64_t byte_size;
  RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
      input, NULL, NULL, &shape, &dims, &byte_size, NULL));
  const void* buffer;
  uint64_t buffer_size;
  int memory_type = 0;
  int64_t memory_type_id = 0;
  RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(
      input, 0, &buffer, &buffer_size, &memory_type, &memory_type_id));
  const float* in = buffer;
  size_t count = buffer_size / sizeof(float);
  if (count > 0 && in[0] < 0) {
    return TRITONSERVER_ErrorNew(ERROR_INVALID_ARG, "negative input");
  }
  TRITONBACKEND_Output* output;
  RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      response, &output, "OUT", TYPE_FP32, shape, dims));
  void* out_buffer;
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      output, &out_buffer, byte_size, &memory_type, &memory_type_id));
  float* out = out_buffer;
  for (size_t i = 0; i < count; ++i) out[i] = in[i] + 1;
  RETURN_IF_ERROR(TRITONBACKEND_ResponseSetIntParameter(response, "batch", batch));
  RETURN_IF_ERROR(TRITONBACKEND_ResponseSetStringParameter(
      response, "backend_config", backend_config));
  uint32_t parameters;
  RETURN_IF_ERROR(TRITONBACKEND_RequestParameterCount(request, &parameters));
  for (uint32_t p = 0; p < parameters; ++p) {
    const char* key;
    int type;
    const void* value;
    RETURN_IF_ERROR(TRITONBACKEND_RequestParameter(request, p, &key, &type, &value));
    if (strcmp(key, "tag") == 0 && type == PARAMETER_STRING) {
      RETURN_IF_ERROR(TRITONBACKEND_ResponseSetStringParameter(response, "tag", value));
    }
  }
  return NULL;
}

/* Sends `response`, or `error` in its place when there is one. */
static void
Send(TRITONBACKEND_Response* response, uint32_t flags, TRITONSERVER_Error* error)
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
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  ModelState* state;
  RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, (void**)&state));
  if (state->behaviour == 1) {
    return TRITONSERVER_ErrorNew(ERROR_INTERNAL, "execute failed on purpose");
  }
  if (state->behaviour == 2) {
    return NULL;
  }
  TRITONBACKEND_Backend* backend;
  RETURN_IF_ERROR(TRITONBACKEND_ModelBackend(model, &backend));
  const char* backend_config;
  RETURN_IF_ERROR(TRITONBACKEND_BackendState(backend, (void**)&backend_config));

  for (uint32_t r = 0; r < request_count; ++r) {
    TRITONBACKEND_Request* request = requests[r];
    if (state->decoupled) {
      TRITONBACKEND_ResponseFactory* factory;
      RETURN_IF_ERROR(TRITONBACKEND_ResponseFactoryNew(&factory, request));
      for (int i = 0; i < 2; ++i) {
        TRITONBACKEND_Response* response;
        RETURN_IF_ERROR(TRITONBACKEND_ResponseNewFromFactory(&response, factory));
        Send(response, 0, Fill(response, request, request_count, backend_config));
      }
      RETURN_IF_ERROR(TRITONBACKEND_ResponseFactorySendFlags(factory, RESPONSE_FINAL));
      RETURN_IF_ERROR(TRITONBACKEND_ResponseFactoryDelete(factory));
    } else {
      TRITONBACKEND_Response* response;
      RETURN_IF_ERROR(TRITONBACKEND_ResponseNew(&response, request));
      TRITONSERVER_Error* error =
          state->accumulates
              ? Accumulate(response, request)
              : Fill(response, request, request_count, backend_config);
      RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceReportStatistics(
          instance, request, error == NULL, 1, 2, 3, 4));
      Send(response, RESPONSE_FINAL, error);
    }
  }
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceReportBatchStatistics(
      instance, request_count, 1, 2, 3, 4));
  for (uint32_t r = 0; r < request_count; ++r) {
    RETURN_IF_ERROR(TRITONBACKEND_RequestRelease(requests[r], RELEASE_ALL));
  }
  return NULL;
}
