"""A model of the generate convention that tells what it was sent, for the
OpenAI-compatible API's tests: `text_output` is a JSON object with the
prompt (`text_input`), every other input by name (as lists) and the
request parameters."""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [self.describe(request) for request in requests]

    def describe(self, request):
        seen = {"parameters": json.loads(request.parameters() or "{}")}
        for tensor in request.inputs():
            values = tensor.as_numpy().flatten().tolist()
            values = [v.decode("utf-8") if isinstance(v, bytes) else v for v in values]
            seen[tensor.name()] = values[0] if tensor.name() == "text_input" else values
        text = np.array([json.dumps(seen).encode("utf-8")], dtype=np.object_)
        return pb_utils.InferenceResponse([pb_utils.Tensor("text_output", text)])
