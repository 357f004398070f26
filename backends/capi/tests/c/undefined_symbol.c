/* A backend library that needs a function no Triton host provides: opening
 * it fails with the dynamic loader's "undefined symbol" error. */
typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONBACKEND_ModelInstance TRITONBACKEND_ModelInstance;
typedef struct TRITONBACKEND_Request TRITONBACKEND_Request;

TRITONSERVER_Error* TRITONBACKEND_NoSuchFunction(void);

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const unsigned int request_count)
{
  return TRITONBACKEND_NoSuchFunction();
}
