"""Models for the model-management tests: a Python model that logs every
execution (to see warmup happen) and fails on a chosen input, and helpers
to talk to it."""

import json

import numpy as np
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config

# Logs the batch size of every execution to the file the `log` parameter
# names; an input of all 13s raises (a warmup sample can make the load fail).
LOGGING_MODEL_PY = model_source("logging")

# The ensemble "pipeline": one step on the logging model "member".
ENSEMBLE = """name: "pipeline"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 4 ] } ]
ensemble_scheduling { step [ {
  model_name: "member" model_version: -1
  input_map { key: "INPUT0" value: "IN" }
  output_map { key: "OUTPUT0" value: "OUT" }
} ] }
"""


def logging_model(name, log, warmup="", tag="", max_batch_size=8, versions=(1,)):
    """A Python INT32 [4] identity that logs its executions to `log`."""
    extra = (
        f'parameters [ {{ key: "log" value: {{ string_value: "{log}" }} }},\n'
        f'  {{ key: "tag" value: {{ string_value: "{tag}" }} }} ]\n' + warmup
    )
    return PyModel(
        name,
        LOGGING_MODEL_PY,
        config([("INPUT0", "INT32", [4])], [("OUTPUT0", "INT32", [4])], max_batch_size, extra),
        versions=versions,
    )


def config_json(name, log, max_batch_size=8, tag=""):
    """`logging_model`'s configuration as the JSON of a load request."""
    return json.dumps(
        {
            "name": name,
            "backend": "python",
            "max_batch_size": max_batch_size,
            "input": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [4]}],
            "output": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [4]}],
            "parameters": {"log": {"string_value": str(log)}, "tag": {"string_value": tag}},
        }
    )


def infer(client, model, values=(1, 2, 3, 4), version=""):
    """One INT32 [1, 4] request; returns OUTPUT0 as a list."""
    tensor = httpclient.InferInput("INPUT0", [1, 4], "INT32")
    tensor.set_data_from_numpy(np.array([values], dtype=np.int32))
    result = client.infer(model, [tensor], model_version=version)
    return result.as_numpy("OUTPUT0").tolist()[0]


def executions(log):
    """The batch sizes the model logged, in order."""
    return [int(line) for line in log.read_text().split()] if log.exists() else []
