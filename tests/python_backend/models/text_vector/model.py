"""A toy embedding model for the OpenAI-compatible API's tests: `text`
(BYTES) in, `vector` (FP32 [3]) out: the text's length, its count of
spaces, and 0.25."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "text").as_numpy().flatten()[0]
            text = text.decode("utf-8")
            vector = np.array([len(text), text.count(" "), 0.25], dtype=np.float32)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("vector", vector)]))
        return responses
