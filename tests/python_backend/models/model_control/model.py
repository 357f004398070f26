"""Runs the model control call its COMMAND input names (a JSON object) and answers
what it gave: {"value": <the call's result>} or {"error": "<exception type>: <text>"}.

Commands: {"op": "load", "name", "config"?, "files"?: {name: text}},
{"op": "unload", "name", "dependents"?}, {"op": "ready", "name", "version"?}.
"""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


def run(command):
    op, name = command["op"], command["name"]
    if op == "load":
        files = command.get("files")
        if files is not None:
            files = {key: text.encode() for key, text in files.items()}
        return pb_utils.load_model(name, command.get("config", ""), files)
    if op == "unload":
        return pb_utils.unload_model(name, unload_dependents=command.get("dependents", False))
    if op == "ready":
        return pb_utils.is_model_ready(name, command.get("version", ""))
    raise ValueError("unknown op " + op)


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "COMMAND").as_numpy()[0]
            try:
                result = {"value": run(json.loads(text))}
            except Exception as e:
                result = {"error": "%s: %s" % (type(e).__name__, e)}
            out = np.array([json.dumps(result).encode()], dtype=np.object_)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("RESULT", out)]))
        return responses
