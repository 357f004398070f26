"""A model that calls itself: DEPTH > 0 makes a BLS call of this model with DEPTH - 1.
OUT = 100 * DEPTH; PID holds the pid of the process that served each level, outermost
first."""

import os

import numpy as np

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            depth = int(pb_utils.get_input_tensor_by_name(request, "DEPTH").as_numpy()[0])
            out, pids = 0, [os.getpid()]
            if depth > 0:
                response = pb_utils.InferenceRequest(
                    model_name="bls_self",
                    inputs=[pb_utils.Tensor("DEPTH", np.array([depth - 1], np.int32))],
                    requested_output_names=["OUT", "PID"],
                ).exec()
                if response.has_error():
                    raise pb_utils.TritonModelException(response.error().message())
                out = int(pb_utils.get_output_tensor_by_name(response, "OUT").as_numpy()[0]) + 100
                pids += pb_utils.get_output_tensor_by_name(response, "PID").as_numpy().tolist()
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor("OUT", np.array([out], np.int32)),
                pb_utils.Tensor("PID", np.array(pids, np.int64)),
            ]))
        return responses
