/* A backend library that needs a function no Triton host provides: opening
 * it fails with the dynamic loader's "undefined symbol" error. */
#include "triton_api.h"

TRITONSERVER_Error* TRITONBACKEND_NoSuchFunction(void);

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  return TRITONBACKEND_NoSuchFunction();
}
