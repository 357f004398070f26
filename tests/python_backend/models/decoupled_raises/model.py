import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            request.get_response_sender().send(pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", np.array([1], dtype=np.int32))]))
        raise pb_utils.TritonModelException("decoupled execute raised after one response")
