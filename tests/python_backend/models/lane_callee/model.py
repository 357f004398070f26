"""The model the lane tests call: OUT = 2 * IN (FP32, any length). IN[0] == 13 makes its
execute raise, IN[0] == -1 ends its process in the middle of the call, IN[0] == 4096
answers with IN[1] million values (2 * IN[1], a large answer to a small call)."""

import os

import numpy as np

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            values = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()
            if values[0] == -1:
                os._exit(3)
            if values[0] == 13:
                raise ValueError("thirteen is refused")
            if values[0] == 4096:
                values = np.full(int(values[1]) * 1_000_000, values[1], dtype=np.float32)
            out = pb_utils.Tensor("OUT", values * 2)
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
