/* A backend that answers with what the host told it, through backend,
 * model and instance state:
 *
 *   MODEL_INDEX    INT64 [1]  the how-manieth model this library initialized
 *                             (a counter in the backend state)
 *   COUNT          INT64 [1]  requests this instance has run, this one too
 *   MODEL          BYTES [1]  "<model name>:<version>"
 *   GREETING       BYTES [1]  the config parameter "greeting"
 *   CMDLINE        BYTES [1]  "answer" of the backend config's "cmdline"
 *                             (--backend-config=stateful,answer=...), or ""
 *   LOCATION       BYTES [1]  the folder the library was loaded from
 *   REQUEST_ID     BYTES [1]  the request id
 *   CORRELATION_ID UINT64 [1] the request's correlation (sequence) id
 *   PARAMETERS     BYTES [n]  "key=type:value" per request parameter
 *   GPU_REFUSED    BOOL [1]   whether the memory manager refused GPU memory
 *
 * BYTES outputs are assembled in memory from the backend memory manager.
 * Each response carries the parameters greeting (string), count (int),
 * stateful (bool, true) and ratio (double, 0.25). Input X (INT32) is read
 * and otherwise ignored. */
#include <inttypes.h>
#include <pthread.h>

#include "backend_util.h"

struct backend_state {
  pthread_mutex_t lock;
  int64_t models_initialized;
  char answer[128];
  char location[4096];
  TRITONBACKEND_MemoryManager* memory;
};

struct model_state {
  struct backend_state* backend;
  int64_t index;
  char model[256];
  char greeting[128];
  bool gpu_refused;
};

struct instance_state {
  struct model_state* model;
  int64_t count;
};

TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  TRY(check_api_version("stateful"));
  struct backend_state* state = calloc(1, sizeof *state);
  pthread_mutex_init(&state->lock, NULL);
  char* config;
  TRITONSERVER_Error* err = backend_config_text(backend, &config);
  if (err == NULL) {
    json_string(
        json_member(json_member(config, "cmdline"), "answer"), state->answer,
        sizeof state->answer);
    free(config);
    TRITONBACKEND_ArtifactType type;
    const char* location;
    err = TRITONBACKEND_BackendArtifacts(backend, &type, &location);
    if (err == NULL)
      snprintf(state->location, sizeof state->location, "%s", location);
  }
  if (err == NULL)
    err = TRITONBACKEND_BackendMemoryManager(backend, &state->memory);
  if (err == NULL) err = TRITONBACKEND_BackendSetState(backend, state);
  if (err != NULL) free(state);
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_Finalize(TRITONBACKEND_Backend* backend)
{
  struct backend_state* state;
  TRY(TRITONBACKEND_BackendState(backend, (void**)&state));
  pthread_mutex_destroy(&state->lock);
  free(state);
  return NULL;
}

/* Whether the memory manager refuses GPU memory (this host has no CUDA). */
static bool gpu_refused(TRITONBACKEND_MemoryManager* memory)
{
  void* buffer;
  if (!ok(TRITONBACKEND_MemoryManagerAllocate(
          memory, &buffer, TRITONSERVER_MEMORY_GPU, 0, 64)))
    return true;
  ok(TRITONBACKEND_MemoryManagerFree(
      memory, buffer, TRITONSERVER_MEMORY_GPU, 0));
  return false;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  TRITONBACKEND_Backend* backend;
  struct backend_state* backend_state;
  const char* name;
  uint64_t version;
  char* config;
  TRY(TRITONBACKEND_ModelBackend(model, &backend));
  TRY(TRITONBACKEND_BackendState(backend, (void**)&backend_state));
  TRY(TRITONBACKEND_ModelName(model, &name));
  TRY(TRITONBACKEND_ModelVersion(model, &version));
  TRY(model_config_text(model, &config));

  struct model_state* state = calloc(1, sizeof *state);
  state->backend = backend_state;
  snprintf(state->model, sizeof state->model, "%s:%" PRIu64, name, version);
  config_parameter(config, "greeting", state->greeting, sizeof state->greeting);
  free(config);
  state->gpu_refused = gpu_refused(backend_state->memory);
  pthread_mutex_lock(&backend_state->lock);
  state->index = ++backend_state->models_initialized;
  pthread_mutex_unlock(&backend_state->lock);
  return set_model_state(model, state);
}

TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  return free_model_state(model);
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance* instance)
{
  struct instance_state* state = calloc(1, sizeof *state);
  TRITONSERVER_Error* err =
      instance_model_state(instance, (void**)&state->model);
  if (err == NULL) err = TRITONBACKEND_ModelInstanceSetState(instance, state);
  if (err != NULL) free(state);
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance* instance)
{
  void* state;
  TRY(TRITONBACKEND_ModelInstanceState(instance, &state));
  free(state);
  return NULL;
}

/* A BYTES output of `n` strings, serialized (4-byte little-endian length,
 * then the bytes, per element) in memory from the memory manager. */
static TRITONSERVER_Error* bytes_output(
    TRITONBACKEND_Response* response, TRITONBACKEND_MemoryManager* memory,
    const char* name, const char* const* items, uint32_t n)
{
  uint64_t size = 0;
  for (uint32_t i = 0; i < n; i++) size += 4 + strlen(items[i]);
  void* buffer;
  TRY(TRITONBACKEND_MemoryManagerAllocate(
      memory, &buffer, TRITONSERVER_MEMORY_CPU, 0, size ? size : 1));
  char* p = buffer;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t len = (uint32_t)strlen(items[i]);
    const unsigned char prefix[4] = {
        len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, len >> 24};
    memcpy(p, prefix, 4);
    memcpy(p + 4, items[i], len);
    p += 4 + len;
  }
  const int64_t shape[1] = {n};
  TRITONSERVER_Error* err = write_output(
      response, name, TRITONSERVER_TYPE_BYTES, shape, 1, buffer, size);
  ok(TRITONBACKEND_MemoryManagerFree(
      memory, buffer, TRITONSERVER_MEMORY_CPU, 0));
  return err;
}

static TRITONSERVER_Error* one_bytes(
    TRITONBACKEND_Response* response, TRITONBACKEND_MemoryManager* memory,
    const char* name, const char* value)
{
  return bytes_output(response, memory, name, &value, 1);
}

static TRITONSERVER_Error* scalar(
    TRITONBACKEND_Response* response, const char* name,
    TRITONSERVER_DataType datatype, const void* value, uint64_t size)
{
  const int64_t shape[1] = {1};
  return write_output(response, name, datatype, shape, 1, value, size);
}

/* The request's parameters as "key=type:value" strings the caller frees. */
static TRITONSERVER_Error* describe_parameters(
    TRITONBACKEND_Request* request, char*** out, uint32_t* count)
{
  TRY(TRITONBACKEND_RequestParameterCount(request, count));
  char** items = calloc(*count ? *count : 1, sizeof *items);
  for (uint32_t i = 0; i < *count; i++) {
    const char* key;
    TRITONSERVER_ParameterType type;
    const void* value;
    TRITONSERVER_Error* err =
        TRITONBACKEND_RequestParameter(request, i, &key, &type, &value);
    if (err != NULL) {
      for (uint32_t j = 0; j < i; j++) free(items[j]);
      free(items);
      return err;
    }
    char text[512];
    switch (type) {
      case TRITONSERVER_PARAMETER_STRING:
        snprintf(text, sizeof text, "%s=string:%s", key, (const char*)value);
        break;
      case TRITONSERVER_PARAMETER_INT:
        snprintf(
            text, sizeof text, "%s=int:%" PRId64, key, *(const int64_t*)value);
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        snprintf(
            text, sizeof text, "%s=bool:%s", key,
            *(const bool*)value ? "true" : "false");
        break;
      case TRITONSERVER_PARAMETER_DOUBLE:
        snprintf(text, sizeof text, "%s=double:%g", key, *(const double*)value);
        break;
      default:
        snprintf(text, sizeof text, "%s=type%d", key, (int)type);
    }
    items[i] = strdup(text);
  }
  *out = items;
  return NULL;
}

static TRITONSERVER_Error* answer(
    struct instance_state* instance, TRITONBACKEND_Request* request,
    TRITONBACKEND_Response* response)
{
  struct model_state* model = instance->model;
  struct backend_state* backend = model->backend;
  TRITONBACKEND_MemoryManager* memory = backend->memory;
  struct tensor_in x;
  TRY(read_input(request, "X", TRITONSERVER_TYPE_INT32, &x));
  free(x.data);
  const char* id;
  uint64_t correlation;
  char** params;
  uint32_t param_count;
  TRY(TRITONBACKEND_RequestId(request, &id));
  TRY(TRITONBACKEND_RequestCorrelationId(request, &correlation));
  TRY(describe_parameters(request, &params, &param_count));
  const int64_t count = ++instance->count;

  TRITONSERVER_Error* err = bytes_output(
      response, memory, "PARAMETERS", (const char* const*)params, param_count);
  for (uint32_t i = 0; i < param_count; i++) free(params[i]);
  free(params);
  TRY(err);
  TRY(scalar(
      response, "MODEL_INDEX", TRITONSERVER_TYPE_INT64, &model->index,
      sizeof model->index));
  TRY(scalar(response, "COUNT", TRITONSERVER_TYPE_INT64, &count, sizeof count));
  TRY(scalar(
      response, "CORRELATION_ID", TRITONSERVER_TYPE_UINT64, &correlation,
      sizeof correlation));
  TRY(scalar(
      response, "GPU_REFUSED", TRITONSERVER_TYPE_BOOL, &model->gpu_refused,
      1));
  TRY(one_bytes(response, memory, "MODEL", model->model));
  TRY(one_bytes(response, memory, "GREETING", model->greeting));
  TRY(one_bytes(response, memory, "CMDLINE", backend->answer));
  TRY(one_bytes(response, memory, "LOCATION", backend->location));
  TRY(one_bytes(response, memory, "REQUEST_ID", id));
  TRY(TRITONBACKEND_ResponseSetStringParameter(
      response, "greeting", model->greeting));
  TRY(TRITONBACKEND_ResponseSetIntParameter(response, "count", count));
  TRY(TRITONBACKEND_ResponseSetBoolParameter(response, "stateful", true));
  TRY(TRITONBACKEND_ResponseSetDoubleParameter(response, "ratio", 0.25));
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  struct instance_state* state;
  TRY(TRITONBACKEND_ModelInstanceState(instance, (void**)&state));
  for (uint32_t r = 0; r < request_count; r++) {
    const uint64_t start = now_ns();
    TRITONBACKEND_Response* response;
    TRITONSERVER_Error* err = TRITONBACKEND_ResponseNew(&response, requests[r]);
    if (err == NULL) {
      err = answer(state, requests[r], response);
    } else {
      response = NULL;
    }
    ok(TRITONBACKEND_ModelInstanceReportStatistics(
        instance, requests[r], err == NULL, start, start, now_ns(), now_ns()));
    respond_and_release(requests[r], response, err);
  }
  return NULL;
}
