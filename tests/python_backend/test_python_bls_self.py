"""A Python model with two instances that calls itself through BLS: the call runs on the
other instance, as in Triton, while the calling one waits in `execute` (its process
holds a batch, so it must not be handed the call it waits for)."""

import contextlib

import numpy as np
import pytest
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    model = PyModel("bls_self", model_source("bls_self"),
                    config([("DEPTH", "INT32", [1])],
                           [("OUT", "INT32", [1]), ("PID", "INT64", [-1])], count=2))
    with serve(tmp_path_factory.mktemp("py_bls_self"), [model]) as s:
        yield s


def test_a_call_of_its_own_model_runs_on_the_other_instance(server):
    # A hang fails the test at the client's timeout instead of blocking the run.
    with contextlib.closing(httpclient.InferenceServerClient(
            server.url, network_timeout=20.0, connection_timeout=20.0)) as client:
        for _ in range(20):  # the later calls may take a lane
            tensor = httpclient.InferInput("DEPTH", [1], "INT32")
            tensor.set_data_from_numpy(np.array([1], np.int32))
            result = client.infer("bls_self", [tensor])
            assert result.as_numpy("OUT").tolist() == [100]
            outer, inner = result.as_numpy("PID").tolist()
            assert outer != inner, "the call ran in the calling process"
