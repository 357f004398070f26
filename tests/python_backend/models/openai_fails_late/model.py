"""A decoupled model of the generate convention that fails part-way, for
the OpenAI-compatible API's tests: one response with the text "partial",
then a final error response."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            text = np.array([b"partial"], dtype=np.object_)
            sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("text_output", text)]))
            failed = pb_utils.InferenceResponse(error=pb_utils.TritonError("ran out of words"))
            sender.send(failed, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
