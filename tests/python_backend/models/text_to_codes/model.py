import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """text_input (BYTES [1]) -> CODES (INT32 [-1]): the text's bytes, a
    stand-in for a tokenizer."""

    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "text_input").as_numpy()[0]
            codes = np.frombuffer(bytes(text), dtype=np.uint8).astype(np.int32)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("CODES", codes)]))
        return responses
