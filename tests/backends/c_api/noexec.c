/* A library that is no backend: it lacks the one required entry point,
 * TRITONBACKEND_ModelInstanceExecute, so no model of it can load. */
#include "backend_util.h"

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  (void)model;
  return NULL;
}
