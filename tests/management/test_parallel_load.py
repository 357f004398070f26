"""`--model-load-thread-count`: models load at the same time at start-up (up
to that many), one after another with 1; each load's time is logged."""

import json

import pytest

from python_models import PyModel, config, write_repo
from servers import TARGET, Server

# Records when its initialize ran (start and end), which takes a moment.
TIMED_INIT_PY = '''\
import json
import os
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        start = time.time()
        time.sleep(0.5)
        path = os.path.join(args["model_repository"], "init.json")
        with open(path, "w") as f:
            json.dump([start, time.time()], f)

    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor(
            "OUT", pb_utils.get_input_tensor_by_name(r, "IN").as_numpy())]) for r in requests]
'''

NAMES = ["m0", "m1", "m2", "m3"]


def _intervals(repo):
    return [json.loads((repo / name / "init.json").read_text()) for name in NAMES]


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
