import json
import os
from pathlib import Path

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """Echoes INPUT0 as OUTPUT0; each instance appends its pid to the files
    `initialize` and `finalize` of the folder its COUNTS parameter names
    (outside the model folder, whose files must not change)."""

    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.counts = Path(config["parameters"]["COUNTS"]["string_value"])
        self._mark("initialize")

    def _mark(self, event):
        with open(self.counts / event, "a") as f:
            f.write(f"{os.getpid()}\n")

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())]
            )
            for r in requests
        ]

    def finalize(self):
        self._mark("finalize")
