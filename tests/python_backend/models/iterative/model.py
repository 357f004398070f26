"""After Triton's qa/python_models/iterative_sequence: a decoupled model of an iterative
sequence. A request's IN (INT32) is how many responses it gets, one per execution: OUT
counts down to 0; until then the model reschedules the request
(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) and the scheduler gives it back in a later
batch. Each response also says what that execution saw: the request's correlation ID
and whether it carried the START flag."""

import numpy as np
import triton_python_backend_utils as pb_utils

START = pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START


def column(value, dtype):
    return np.array([[value]], dtype=dtype)


class TritonPythonModel:
    def initialize(self, args):
        self.remaining = {}  # correlation ID -> responses still to send

    def execute(self, requests):
        for request in requests:
            corrid = request.correlation_id()
            start = bool(request.flags() & START)
            if not start and corrid not in self.remaining:
                # Triton's direct strategy fills a batch's idle sequence slots with null
                # requests (correlation ID 0): nothing to answer
                continue
            if start:
                count = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()
                self.remaining[corrid] = int(count.reshape(-1)[0])
            self.remaining[corrid] -= 1
            left = self.remaining[corrid]
            response = pb_utils.InferenceResponse([
                pb_utils.Tensor("OUT", column(left, np.int32)),
                pb_utils.Tensor("CORRID", column(corrid, np.uint64)),
                pb_utils.Tensor("START", column(start, np.bool_)),
            ])
            sender = request.get_response_sender()
            if left <= 0:
                del self.remaining[corrid]
                sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            else:
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
                sender.send(response)
        return None
