"""Implicit state (`sequence_batching { state [...] }`) with an ONNX model:
an accumulator whose running sum lives in the server, not the model. Each
request of a sequence gets back the state its previous request produced;
sequences interleave without mixing; the state output reaches the client only
when listed and asked for; `initial_state` from a data file."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from onnx import helper

from onnx_models import OnnxModel, make_proto
from servers import TARGET, Server

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="the real Triton here has no onnxruntime backend")

SEQUENCE = """sequence_batching {{
  max_sequence_idle_microseconds: 5000000
  state [ {{ input_name: "SUM_IN" output_name: "SUM_OUT" data_type: TYPE_INT32 dims: [ 1 ]{initial} }} ]
}}"""
INITIAL = """
    initial_state: { data_type: TYPE_INT32 dims: [ 1 ] name: "hundred" data_file: "hundred.bin" }"""


def accumulator(name):
    """SUM_OUT = SUM_IN + X, and OUT = SUM_OUT: INT32 [N, 1]."""
    shape = ("N", 1)
    proto = make_proto(
        [helper.make_node("Add", ["SUM_IN", "X"], ["SUM_OUT"]),
         helper.make_node("Identity", ["SUM_OUT"], ["OUT"])],
        [("X", "INT32", shape), ("SUM_IN", "INT32", shape)],
        [("OUT", "INT32", shape), ("SUM_OUT", "INT32", shape)],
    )
    return OnnxModel(name, proto, [("X", "INT32", shape)], [("OUT", "INT32", shape)])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("implicit_state")
    plain = accumulator("acc")
    plain.write(repo, plain.config(4, SEQUENCE.format(initial="")))
    listed = accumulator("acc_listed")
    listed.outputs.append(("SUM_OUT", "INT32", ("N", 1)))
    listed.write(repo, listed.config(4, SEQUENCE.format(initial="")))
    seeded = accumulator("acc_seeded")
    folder = seeded.write(repo, seeded.config(4, SEQUENCE.format(initial=INITIAL)))
    (folder / "initial_state").mkdir()
    (folder / "initial_state/hundred.bin").write_bytes(np.array([100], np.int32).tobytes())
    with Server(repo) as s:
        yield s


def send(module, url, model, value, sequence_id, outputs=("OUT",), **flags):
    with module.InferenceServerClient(url) as client:
        x = module.InferInput("X", [1, 1], "INT32")
        x.set_data_from_numpy(np.array([[value]], np.int32))
        wanted = [module.InferRequestedOutput(o) for o in outputs]
        result = client.infer(model, [x], outputs=wanted, sequence_id=sequence_id, **flags)
        return {o: result.as_numpy(o) for o in outputs}


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_interleaved_sequences_accumulate_separately(server, protocol):
    module = {"http": httpclient, "grpc": grpcclient}[protocol]
    url = server.url if protocol == "http" else server.grpc_url
    values = {11: [1, 2, 3, 4], 12: [10, 20, 30, 40], 13: [-5, 5, -5, 5]}
    sums = {cid: 0 for cid in values}
    for step in range(4):
        for cid, series in values.items():
            flags = {"sequence_start": step == 0, "sequence_end": step == 3}
            got = send(module, url, "acc", series[step], cid, **flags)["OUT"]
            sums[cid] += series[step]
            assert got.tolist() == [[sums[cid]]], (cid, step)


def test_a_restarted_sequence_begins_from_zero(server):
    assert send(httpclient, server.url, "acc", 5, 21, sequence_start=True)["OUT"].tolist() == [[5]]
    assert send(httpclient, server.url, "acc", 5, 21)["OUT"].tolist() == [[10]]
    assert send(httpclient, server.url, "acc", 1, 21, sequence_start=True)["OUT"].tolist() == [[1]]
    send(httpclient, server.url, "acc", 0, 21, sequence_end=True)


def test_the_state_output_is_returned_only_when_listed_and_asked(server):
    got = send(httpclient, server.url, "acc_listed", 4, 31, outputs=("OUT", "SUM_OUT"),
               sequence_start=True)
    assert got["SUM_OUT"].tolist() == [[4]]
    with httpclient.InferenceServerClient(server.url) as client:
        x = httpclient.InferInput("X", [1, 1], "INT32")
        x.set_data_from_numpy(np.array([[1]], np.int32))
        result = client.infer("acc", [x], sequence_id=32, sequence_start=True, sequence_end=True)
        assert [o["name"] for o in result.get_response()["outputs"]] == ["OUT"]
    send(httpclient, server.url, "acc_listed", 0, 31, sequence_end=True)


def test_initial_state_comes_from_its_data_file(server):
    got = send(grpcclient, server.grpc_url, "acc_seeded", 1, 41, sequence_start=True)
    assert got["OUT"].tolist() == [[101]]
    got = send(grpcclient, server.grpc_url, "acc_seeded", 2, 41, sequence_end=True)
    assert got["OUT"].tolist() == [[103]]


def test_a_state_the_model_lacks_fails_the_load(tmp_path):
    model = accumulator("acc_wrong")
    model.write(tmp_path, model.config(4, SEQUENCE.format(initial="").replace("SUM_IN", "NOPE")))
    with Server(tmp_path, ["--exit-on-error=false"]) as s, \
            httpclient.InferenceServerClient(s.url) as client:
        (entry,) = client.get_model_repository_index()
        assert entry["state"] == "UNAVAILABLE"
        assert "state input 'NOPE' (TYPE_INT32) is not a model input" in entry["reason"]
