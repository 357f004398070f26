"""Ensembles whose steps have optional inputs, after Triton 2.51's
qa/L0_optional_input (`optional_connecting_tensor`): an optional ensemble
input the request leaves out, and a step output that its step did not
produce, are absent tensors. A step fed by an absent tensor still runs,
without that input, instead of the request failing with "unexpected
deadlock". The member is a gated model (gated.py) that is never held: it
copies INPUTn to OUTPUTn for each input it gets and counts its executions."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from gated import Ensemble, Gate, gated_model
from python_models import serve

OPTIONAL = [("INPUT0", "FP32", [1], "optional: true"), ("INPUT1", "FP32", [1], "optional: true")]
OUTPUTS = [("OUTPUT0", "FP32", [1]), ("OUTPUT1", "FP32", [1])]


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    gate = Gate(tmp_path_factory.mktemp("optional_gate"))
    gate.release_all()
    return gate


@pytest.fixture(scope="module")
def server(tmp_path_factory, gate):
    member = gated_model("optional_identity", gate, 4, inputs=OPTIONAL, outputs=OUTPUTS)
    ensemble = Ensemble(
        "optional_connecting_tensor", OPTIONAL, OUTPUTS,
        [("optional_identity", {"INPUT0": "INPUT0", "INPUT1": "INPUT1"},
          {"OUTPUT0": "internal_output0", "OUTPUT1": "internal_output1"}),
         ("optional_identity", {"INPUT0": "internal_output0", "INPUT1": "internal_output1"},
          {"OUTPUT0": "OUTPUT0", "OUTPUT1": "OUTPUT1"})],
        max_batch_size=4)
    with serve(tmp_path_factory.mktemp("optional"), [member, ensemble]) as server:
        yield server


@pytest.fixture(params=["http", "grpc"])
def client(request, server):
    module = httpclient if request.param == "http" else grpcclient
    url = server.url if request.param == "http" else server.grpc_url
    c = module.InferenceServerClient(url)
    yield module, c
    c.close()


def _infer(client, values, outputs):
    module, c = client
    inputs = []
    for name, value in values.items():
        tensor = module.InferInput(name, [1, 1], "FP32")
        tensor.set_data_from_numpy(np.array([[value]], dtype=np.float32))
        inputs.append(tensor)
    requested = [module.InferRequestedOutput(name) for name in outputs]
    return c.infer("optional_connecting_tensor", inputs, outputs=requested)


def test_an_output_not_produced_feeds_the_next_step_as_an_absent_input(client, gate):
    started = gate.started()
    result = _infer(client, {"INPUT0": 3}, ["OUTPUT0"])
    assert result.as_numpy("OUTPUT0").tolist() == [[3]]
    assert result.as_numpy("OUTPUT1") is None
    assert gate.started() - started == 2, "both steps ran"


def test_every_input_given_every_output_produced(client, gate):
    started = gate.started()
    result = _infer(client, {"INPUT0": 3, "INPUT1": 4}, ["OUTPUT0", "OUTPUT1"])
    assert result.as_numpy("OUTPUT0").tolist() == [[3]]
    assert result.as_numpy("OUTPUT1").tolist() == [[4]]
    assert gate.started() - started == 2


def test_a_requested_output_left_absent_is_left_out_of_the_response(client, gate):
    started = gate.started()
    result = _infer(client, {"INPUT1": 5}, ["OUTPUT0", "OUTPUT1"])
    assert result.as_numpy("OUTPUT1").tolist() == [[5]]
    assert result.as_numpy("OUTPUT0") is None
    assert gate.started() - started == 2
