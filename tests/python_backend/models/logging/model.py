import json

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.log = config["parameters"]["log"]["string_value"]
        self.tag = config["parameters"].get("tag", {}).get("string_value", "")

    def execute(self, requests):
        with open(self.log, "a") as f:
            f.write(f"{len(requests)}\n")
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            if (x == 13).all():
                raise pb_utils.TritonModelException("thirteen is unlucky")
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", x)]))
        return responses
