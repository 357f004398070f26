"""`--model-load-thread-count`: models load at the same time at start-up (up
to that many), one after another with 1; each load's time is logged. The
instances of one model are created at the same time too."""

import json

import pytest

from python_models import PyModel, config, write_repo
from servers import TARGET, Server

# Records when each instance's initialize ran (start and end) in
# <instance name>.json; it takes a moment (0.5 s, or the init_seconds parameter).
TIMED_INIT_PY = '''\
import json
import os
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        start = time.time()
        parameters = json.loads(args["model_config"]).get("parameters", {})
        time.sleep(float(parameters.get("init_seconds", {}).get("string_value", "0.5")))
        name = args["model_instance_name"]
        path = os.path.join(args["model_repository"], f"{name}.json")
        with open(path, "w") as f:
            json.dump([start, time.time()], f)

    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor(
            "OUT", pb_utils.get_input_tensor_by_name(r, "IN").as_numpy())]) for r in requests]
'''

NAMES = ["m0", "m1", "m2", "m3"]


def _intervals(repo):
    return [json.loads(next((repo / name).glob("*.json")).read_text()) for name in NAMES]


def _overlapping(intervals):
    """Whether some two intervals overlap in time."""
    ordered = sorted(intervals)
    return any(later[0] < earlier[1] for earlier, later in zip(ordered, ordered[1:]))


@pytest.mark.parametrize("threads", [1, 4])
def test_models_load_in_parallel(tmp_path, threads):
    models = [
        PyModel(n, TIMED_INIT_PY, config([("IN", "INT32", [1])], [("OUT", "INT32", [1])]))
        for n in NAMES
    ]
    repo = write_repo(tmp_path / "repo", models)
    with Server(repo, [f"--model-load-thread-count={threads}"]) as server:
        intervals = _intervals(repo)
        output = server.output()
    assert _overlapping(intervals) == (threads > 1), intervals
    if TARGET == "oxiserve":
        for name in NAMES:
            assert f"loaded '{name}' version 1 in " in output


def test_instances_of_a_model_start_in_parallel(tmp_path):
    extra = 'parameters [ { key: "init_seconds" value: { string_value: "2" } } ]\n'
    model = PyModel("instances", TIMED_INIT_PY,
                    config([("IN", "INT32", [1])], [("OUT", "INT32", [1])], extra=extra, count=3))
    repo = write_repo(tmp_path / "repo", [model])
    with Server(repo):
        files = sorted((repo / "instances").glob("*.json"))
        intervals = [json.loads(f.read_text()) for f in files]
    assert len(intervals) == 3, files
    # Created one after another, no two initializations would overlap.
    assert _overlapping(intervals), intervals
