import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """CODE (INT32 [1]) -> text_output (BYTES [1]): the code's character in
    upper case, a stand-in for a detokenizer."""

    def execute(self, requests):
        responses = []
        for request in requests:
            code = int(pb_utils.get_input_tensor_by_name(request, "CODE").as_numpy()[0])
            text = np.array([chr(code).upper().encode()], dtype=np.object_)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("text_output", text)]))
        return responses
