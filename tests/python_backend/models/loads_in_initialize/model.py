"""Loads a model in `initialize` (its config's `target` parameter, by default "helper")
and answers what it saw: "<ready before>,<"loaded" or the error>,<ready after>"."""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        parameters = json.loads(args["model_config"]).get("parameters", {})
        target = parameters.get("target", {}).get("string_value", "helper")
        before = pb_utils.is_model_ready(target)
        try:
            pb_utils.load_model(target)
            loaded = "loaded"
        except pb_utils.TritonModelException as e:
            loaded = str(e)
        self.seen = "%s,%s,%s" % (before, loaded, pb_utils.is_model_ready(target))

    def execute(self, requests):
        out = np.array([self.seen.encode()], dtype=np.object_)
        return [pb_utils.InferenceResponse([pb_utils.Tensor("RESULT", out)])
                for _ in requests]
