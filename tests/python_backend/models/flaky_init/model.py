import json
import os

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """Fails its first `failures` initializations (counted in a file of the
    model folder), then loads: an identity of INPUT0."""

    def initialize(self, args):
        config = json.loads(args["model_config"])
        failures = int(config["parameters"]["failures"]["string_value"])
        counter = os.path.join(args["model_repository"], "attempts")
        attempts = int(open(counter).read()) if os.path.exists(counter) else 0
        with open(counter, "w") as f:
            f.write(str(attempts + 1))
        if attempts < failures:
            raise pb_utils.TritonModelException(f"attempt {attempts + 1} fails on purpose")

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())]
            )
            for r in requests
        ]
