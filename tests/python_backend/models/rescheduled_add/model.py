"""After Triton's qa/python_models/request_rescheduling_addsub: a default-mode model of an
iterative sequence. A request's first execution (it carries START) reschedules it
(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, None in the returned list); the next one
answers OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, and EXECUTIONS, how many
executions the request had."""

import numpy as np
import triton_python_backend_utils as pb_utils

START = pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START


class TritonPythonModel:
    def initialize(self, args):
        self.executions = {}  # correlation ID -> executions so far

    def execute(self, requests):
        responses = []
        for request in requests:
            corrid = request.correlation_id()
            if request.flags() & START:
                self.executions[corrid] = 1
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
                responses.append(None)
                continue
            executions = self.executions.pop(corrid) + 1
            in0 = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            in1 = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            responses.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("OUTPUT0", in0 + in1),
                pb_utils.Tensor("OUTPUT1", in0 - in1),
                pb_utils.Tensor("EXECUTIONS", np.array([executions], dtype=np.int32)),
            ]))
        return responses
