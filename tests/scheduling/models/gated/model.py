"""A model whose executions wait until the test releases them: execution
number N (1, 2, ... per instance) writes `started-N` (its batch: the request
count and the request ids) into the folder its `gate_dir` parameter names,
then waits until `release-N` or `release-all` exists there. It copies each
input to the output of the same position; an absent (optional) input gives
no output."""

import json
import os
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.gate = config["parameters"]["gate_dir"]["string_value"]
        self.pairs = [
            (i["name"], o["name"]) for i, o in zip(config["input"], config["output"])
        ]
        self.executions = 0

    def execute(self, requests):
        self.executions += 1
        number = self.executions
        started = os.path.join(self.gate, f"started-{number}")
        batch = {"requests": len(requests), "ids": [r.request_id() for r in requests]}
        with open(started + ".tmp", "w") as f:
            json.dump(batch, f)
        os.rename(started + ".tmp", started)
        release = os.path.join(self.gate, f"release-{number}")
        release_all = os.path.join(self.gate, "release-all")
        while not (os.path.exists(release) or os.path.exists(release_all)):
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
