"""Model sources shared by the stub tests."""

ADD_SUB = """
import json
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def initialize(self, args):
        self.args = args
        cfg = json.loads(args["model_config"])
        self.name = cfg["name"]

    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            out0 = pb_utils.Tensor("OUTPUT0", (a + b).astype(np.float32))
            out1 = pb_utils.Tensor("OUTPUT1", (a - b).astype(np.float32))
            responses.append(pb_utils.InferenceResponse([out0, out1],
                                                        parameters={"k": 1}))
        return responses
"""
