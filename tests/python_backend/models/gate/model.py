"""Holds each execution until the test lets it go: execute() creates
`<gate>.started`, then waits until the file `<gate>` exists (the path is the
config parameter "gate"), then copies input i to output i. A test keeps an
inference in flight for as long as it needs, with no timing involved. The
wait gives up after GIVE_UP_S so that a test that fails midway never leaves
the server stuck."""

import json
import os
import time

import triton_python_backend_utils as pb_utils

GIVE_UP_S = 300


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.gate = config["parameters"]["gate"]["string_value"]
        self.pairs = [
            (i["name"], o["name"]) for i, o in zip(config["input"], config["output"])
        ]

    def execute(self, requests):
        open(self.gate + ".started", "w").close()
        deadline = time.monotonic() + GIVE_UP_S
        while not os.path.exists(self.gate) and time.monotonic() < deadline:
            time.sleep(0.01)
        responses = []
        for request in requests:
            outputs = []
            for in_name, out_name in self.pairs:
                tensor = pb_utils.get_input_tensor_by_name(request, in_name)
                if tensor is not None:
                    outputs.append(pb_utils.Tensor(out_name, tensor.as_numpy()))
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses
