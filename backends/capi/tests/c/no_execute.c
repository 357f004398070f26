/* A backend library without TRITONBACKEND_ModelInstanceExecute. */
typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONBACKEND_Backend TRITONBACKEND_Backend;

TRITONSERVER_Error*
TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  return 0;
}
