/* Small helpers the test backends share: error handling, model state, the
 * model configuration as text, reading an input into one buffer, writing an
 * output, answering a request with an error, clocks. */
#ifndef OXI_TEST_BACKEND_UTIL_H
#define OXI_TEST_BACKEND_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_scan.h"
#include "triton_api.h"

/* Returns from the calling function with the error of `X`, if any. */
#define TRY(X)                              \
  do {                                      \
    TRITONSERVER_Error* try_err__ = (X);    \
    if (try_err__ != NULL) return try_err__; \
  } while (0)

/* Whether `err` is success; deletes it otherwise (for calls whose failure
 * only changes what the backend does next). */
static inline bool ok(TRITONSERVER_Error* err)
{
  if (err == NULL) return true;
  TRITONSERVER_ErrorDelete(err);
  return false;
}

static inline uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* A new error with a printf-formatted message. */
static inline TRITONSERVER_Error* errorf(
    TRITONSERVER_Error_Code code, const char* fmt, ...)
{
  char msg[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  return TRITONSERVER_ErrorNew(code, msg);
}

/* The host must offer the API version these backends were written for. */
static inline TRITONSERVER_Error* check_api_version(const char* backend)
{
  uint32_t major, minor;
  TRY(TRITONBACKEND_ApiVersion(&major, &minor));
  if (major != TRITONBACKEND_API_VERSION_MAJOR ||
      minor < TRITONBACKEND_API_VERSION_MINOR)
    return errorf(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "%s: needs backend API %d.%d or a later minor, the host has %u.%u",
        backend, TRITONBACKEND_API_VERSION_MAJOR,
        TRITONBACKEND_API_VERSION_MINOR, major, minor);
  return NULL;
}

/* Makes `state` (one allocation) the model's state; frees it when the host
 * refuses. */
static inline TRITONSERVER_Error* set_model_state(
    TRITONBACKEND_Model* model, void* state)
{
  TRITONSERVER_Error* err = TRITONBACKEND_ModelSetState(model, state);
  if (err != NULL) free(state);
  return err;
}

/* Frees the model's state (one allocation): a TRITONBACKEND_ModelFinalize. */
static inline TRITONSERVER_Error* free_model_state(TRITONBACKEND_Model* model)
{
  void* state;
  TRY(TRITONBACKEND_ModelState(model, &state));
  free(state);
  return NULL;
}

/* The state of the model that `instance` belongs to. */
static inline TRITONSERVER_Error* instance_model_state(
    TRITONBACKEND_ModelInstance* instance, void** state)
{
  TRITONBACKEND_Model* model;
  TRY(TRITONBACKEND_ModelInstanceModel(instance, &model));
  return TRITONBACKEND_ModelState(model, state);
}

/* The model configuration JSON as a NUL-terminated string the caller frees. */
static inline TRITONSERVER_Error* model_config_text(
    TRITONBACKEND_Model* model, char** text)
{
  TRITONSERVER_Message* message;
  TRY(TRITONBACKEND_ModelConfig(model, 1, &message));
  const char* base;
  size_t size;
  TRITONSERVER_Error* err =
      TRITONSERVER_MessageSerializeToJson(message, &base, &size);
  if (err == NULL) {
    *text = strndup(base, size);
  }
  TRITONSERVER_MessageDelete(message);
  return err;
}

/* The backend configuration JSON ({"cmdline": {...}}) as a NUL-terminated
 * string the caller frees. */
static inline TRITONSERVER_Error* backend_config_text(
    TRITONBACKEND_Backend* backend, char** text)
{
  TRITONSERVER_Message* message;
  TRY(TRITONBACKEND_BackendConfig(backend, &message));
  const char* base;
  size_t size;
  TRY(TRITONSERVER_MessageSerializeToJson(message, &base, &size));
  *text = strndup(base, size);
  return NULL;
}

/* One input of `request`, checked to be `datatype`, copied into one buffer
 * the caller frees (the host may hand it over in several pieces); `data`
 * is NULL on failure. */
struct tensor_in {
  const int64_t* shape;
  uint32_t dims;
  uint64_t byte_size;
  void* data;
};

static inline TRITONSERVER_Error* read_input(
    TRITONBACKEND_Request* request, const char* name,
    TRITONSERVER_DataType datatype, struct tensor_in* in)
{
  in->data = NULL;
  TRITONBACKEND_Input* input;
  TRY(TRITONBACKEND_RequestInput(request, name, &input));
  TRITONSERVER_DataType actual;
  uint32_t buffers;
  TRY(TRITONBACKEND_InputProperties(
      input, NULL, &actual, &in->shape, &in->dims, &in->byte_size, &buffers));
  if (actual != datatype)
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "input '%s' has datatype %d, not %d",
        name, (int)actual, (int)datatype);
  in->data = malloc(in->byte_size ? in->byte_size : 1);
  uint64_t offset = 0;
  for (uint32_t i = 0; i < buffers; i++) {
    const void* piece;
    uint64_t size;
    TRITONSERVER_MemoryType mem = TRITONSERVER_MEMORY_CPU;
    int64_t mem_id = 0;
    TRITONSERVER_Error* err =
        TRITONBACKEND_InputBuffer(input, i, &piece, &size, &mem, &mem_id);
    if (err == NULL && (mem == TRITONSERVER_MEMORY_GPU ||
                        offset + size > in->byte_size))
      err = errorf(
          TRITONSERVER_ERROR_INTERNAL, "input '%s': unusable buffer %u", name,
          i);
    if (err != NULL) {
      free(in->data);
      in->data = NULL;
      return err;
    }
    memcpy((char*)in->data + offset, piece, size);
    offset += size;
  }
  return NULL;
}

/* Adds output `name` to `response` holding `byte_size` bytes of `data`. */
static inline TRITONSERVER_Error* write_output(
    TRITONBACKEND_Response* response, const char* name,
    TRITONSERVER_DataType datatype, const int64_t* shape, uint32_t dims,
    const void* data, uint64_t byte_size)
{
  TRITONBACKEND_Output* output;
  TRY(TRITONBACKEND_ResponseOutput(
      response, &output, name, datatype, shape, dims));
  void* buffer;
  TRITONSERVER_MemoryType mem = TRITONSERVER_MEMORY_CPU;
  int64_t mem_id = 0;
  TRY(TRITONBACKEND_OutputBuffer(output, &buffer, byte_size, &mem, &mem_id));
  if (mem == TRITONSERVER_MEMORY_GPU)
    return errorf(
        TRITONSERVER_ERROR_INTERNAL, "output '%s' was given GPU memory", name);
  if (byte_size) memcpy(buffer, data, byte_size);
  return NULL;
}

/* Whether the client asked for output `name`. */
static inline bool output_requested(
    TRITONBACKEND_Request* request, const char* name)
{
  uint32_t count = 0;
  if (!ok(TRITONBACKEND_RequestOutputCount(request, &count))) return true;
  for (uint32_t i = 0; i < count; i++) {
    const char* requested;
    if (ok(TRITONBACKEND_RequestOutputName(request, i, &requested)) &&
        strcmp(requested, name) == 0)
      return true;
  }
  return false;
}

/* Sends `response` (or a new one for `request` when NULL) as the final one
 * with `err` (which this deletes), then releases the request. */
static inline void respond_and_release(
    TRITONBACKEND_Request* request, TRITONBACKEND_Response* response,
    TRITONSERVER_Error* err)
{
  if (response == NULL && !ok(TRITONBACKEND_ResponseNew(&response, request)))
    response = NULL;
  if (response != NULL)
    ok(TRITONBACKEND_ResponseSend(
        response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err));
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  ok(TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL));
}

#endif
