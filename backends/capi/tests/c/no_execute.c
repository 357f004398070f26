/* A backend library without TRITONBACKEND_ModelInstanceExecute. */
#include "triton_api.h"

TRITONSERVER_Error*
TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  return NULL;
}
