"""OUTPUT0 = INPUT0 + the config parameter "offset": copies of one model that
differ only in their offset tell which copy answered."""

import json

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.offset = int(config["parameters"]["offset"]["string_value"])

    def execute(self, requests):
        responses = []
        for request in requests:
            values = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            output = pb_utils.Tensor("OUTPUT0", values + self.offset)
            responses.append(pb_utils.InferenceResponse(output_tensors=[output]))
        return responses
