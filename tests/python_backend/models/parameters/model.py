import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """Answers PARAMETERS: the request's parameters as a JSON text."""

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("PARAMETERS", np.array([r.parameters()], dtype=np.object_))]
            )
            for r in requests
        ]
