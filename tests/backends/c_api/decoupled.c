/* A decoupled backend (model_transaction_policy { decoupled: true }): for
 * INT32 input IN = [n] it sends n responses, OUT = [0], [1], ... [n-1], from
 * a thread of its own through a response factory after it has released the
 * request, then the final flag alone. n = 0 sends only the final flag.
 *
 * Between responses it waits "response_delay_ms" (a config parameter) and
 * checks whether the request was cancelled; a cancelled stream stops at
 * once, with the final flag, and is counted. IN = [-1] answers one
 * response, OUT = [the number of streams this model saw cancelled]. */
#include <pthread.h>

#include "backend_util.h"

struct model_state {
  long delay_ms;
  pthread_mutex_t lock;
  pthread_cond_t idle;
  int running; /* streams whose thread has not finished */
  int cancelled;
};

struct stream {
  struct model_state* model;
  TRITONBACKEND_ResponseFactory* factory;
  int32_t n;
};

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  char* config;
  TRY(model_config_text(model, &config));
  struct model_state* state = calloc(1, sizeof *state);
  pthread_mutex_init(&state->lock, NULL);
  pthread_cond_init(&state->idle, NULL);
  char delay[32];
  if (config_parameter(config, "response_delay_ms", delay, sizeof delay) == 0)
    state->delay_ms = atol(delay);
  free(config);
  return set_model_state(model, state);
}

/* Waits for the model's streams to finish: they use its state. */
TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  struct model_state* state;
  TRY(TRITONBACKEND_ModelState(model, (void**)&state));
  pthread_mutex_lock(&state->lock);
  while (state->running > 0) pthread_cond_wait(&state->idle, &state->lock);
  pthread_mutex_unlock(&state->lock);
  pthread_mutex_destroy(&state->lock);
  pthread_cond_destroy(&state->idle);
  free(state);
  return NULL;
}

static TRITONSERVER_Error* send_value(
    TRITONBACKEND_ResponseFactory* factory, int32_t value)
{
  TRITONBACKEND_Response* response;
  TRY(TRITONBACKEND_ResponseNewFromFactory(&response, factory));
  const int64_t shape[1] = {1};
  TRITONSERVER_Error* err = write_output(
      response, "OUT", TRITONSERVER_TYPE_INT32, shape, 1, &value,
      sizeof value);
  if (err != NULL) {
    ok(TRITONBACKEND_ResponseDelete(response));
    return err;
  }
  return TRITONBACKEND_ResponseSend(response, 0, NULL);
}

static bool cancelled(TRITONBACKEND_ResponseFactory* factory)
{
  bool is_cancelled = false;
  return ok(TRITONBACKEND_ResponseFactoryIsCancelled(factory, &is_cancelled)) &&
         is_cancelled;
}

static void* run_stream(void* arg)
{
  struct stream* s = arg;
  struct model_state* model = s->model;
  if (s->n < 0) {
    pthread_mutex_lock(&model->lock);
    const int32_t count = model->cancelled;
    pthread_mutex_unlock(&model->lock);
    ok(send_value(s->factory, count));
  }
  for (int32_t i = 0; i < s->n; i++) {
    if (i > 0 && model->delay_ms > 0) sleep_ms(model->delay_ms);
    if (cancelled(s->factory)) {
      pthread_mutex_lock(&model->lock);
      model->cancelled++;
      pthread_mutex_unlock(&model->lock);
      break;
    }
    if (!ok(send_value(s->factory, i))) break;
  }
  ok(TRITONBACKEND_ResponseFactorySendFlags(
      s->factory, TRITONSERVER_RESPONSE_COMPLETE_FINAL));
  ok(TRITONBACKEND_ResponseFactoryDelete(s->factory));
  free(s);
  pthread_mutex_lock(&model->lock);
  if (--model->running == 0) pthread_cond_broadcast(&model->idle);
  pthread_mutex_unlock(&model->lock);
  return NULL;
}

/* Reads the request's n and opens its response factory. */
static TRITONSERVER_Error* prepare_stream(
    struct model_state* model, TRITONBACKEND_Request* request,
    struct stream** stream)
{
  struct tensor_in in;
  TRY(read_input(request, "IN", TRITONSERVER_TYPE_INT32, &in));
  int32_t n = 0;
  const bool one = in.byte_size == sizeof n;
  if (one) memcpy(&n, in.data, sizeof n);
  free(in.data);
  if (!one)
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "decoupled: IN must hold one INT32");
  struct stream* s = calloc(1, sizeof *s);
  s->model = model;
  s->n = n;
  TRITONSERVER_Error* err =
      TRITONBACKEND_ResponseFactoryNew(&s->factory, request);
  if (err != NULL) {
    free(s);
    return err;
  }
  *stream = s;
  return NULL;
}

static void spawn(struct stream* s)
{
  pthread_mutex_lock(&s->model->lock);
  s->model->running++;
  pthread_mutex_unlock(&s->model->lock);
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_create(&thread, &attr, run_stream, s);
  pthread_attr_destroy(&attr);
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  struct model_state* state;
  TRY(instance_model_state(instance, (void**)&state));
  for (uint32_t r = 0; r < request_count; r++) {
    const uint64_t start = now_ns();
    TRITONBACKEND_Request* request = requests[r];
    struct stream* stream = NULL;
    TRITONSERVER_Error* err = prepare_stream(state, request, &stream);
    ok(TRITONBACKEND_ModelInstanceReportStatistics(
        instance, request, err == NULL, start, start, now_ns(), now_ns()));
    if (err != NULL) {
      respond_and_release(request, NULL, err);
      continue;
    }
    ok(TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL));
    spawn(stream);
  }
  return NULL;
}
