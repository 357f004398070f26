"""Ensembles (`platform: "ensemble"`): seed 000's shape (a tokenizer-like
BYTES step feeding a numeric model) and seed 002's (one preprocessing step
feeding two models), over HTTP and gRPC, with a failing step and a missing
member. The server runs in explicit mode and is asked for the ensembles
only: loading an ensemble loads its members."""

import json
import time
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from models import identity
from python_models import PyModel, config, serve
from servers import TARGET

TOKENIZER_PY = '''\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy()
            ids = np.array([len(t) for t in text.ravel()], dtype=np.int32)
            rid = np.array([request.request_id().encode()], dtype=np.object_)
            params = np.array([request.parameters().encode()], dtype=np.object_)
            responses.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("IDS", ids),
                pb_utils.Tensor("RID", rid),
                pb_utils.Tensor("PARAMS", params),
            ]))
        return responses
'''

# RAW (INT32) -> PIXELS = RAW / 2 (FP32): seed 002's preprocessing step.
PREPROCESS_PY = '''\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor(
                "PIXELS",
                pb_utils.get_input_tensor_by_name(r, "RAW").as_numpy().astype(np.float32) / 2,
            )])
            for r in requests
        ]
'''

SQUARE_PY = '''\
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for r in requests:
            x = pb_utils.get_input_tensor_by_name(r, "X").as_numpy()
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", x * x)]))
        return responses
'''

REFUSES_PY = '''\
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(error=pb_utils.TritonError("step refused this input"))
            for _ in requests
        ]
'''


SLOW_PY = '''\
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        time.sleep(1.5)
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor(
                "Y", pb_utils.get_input_tensor_by_name(r, "X").as_numpy())])
            for r in requests
        ]
'''


class Ensemble:
    """An ensemble model folder: config.pbtxt and an empty version folder."""

    def __init__(self, name, inputs, outputs, steps):
        self.name = name
        self.text = (
            f'name: "{name}"\nplatform: "ensemble"\n'
            + config(inputs, outputs).split("instance_group")[0]
            + "ensemble_scheduling {\n  step [\n"
            + ",\n".join(_step(*s) for s in steps)
            + "\n  ]\n}\n"
        )

    def write(self, repo):
        folder = Path(repo) / self.name
        (folder / "1").mkdir(parents=True, exist_ok=True)
        (folder / "config.pbtxt").write_text(self.text)


def _step(model, inputs, outputs):
    maps = [f'input_map {{ key: "{k}" value: "{v}" }}' for k, v in inputs.items()]
    maps += [f'output_map {{ key: "{k}" value: "{v}" }}' for k, v in outputs.items()]
    return f'    {{ model_name: "{model}" model_version: -1 ' + " ".join(maps) + " }"


def _models():
    tokenizer = PyModel("tokenizer", TOKENIZER_PY, config(
        [("TEXT", "BYTES", [-1])],
        [("IDS", "INT32", [-1]), ("RID", "BYTES", [1]), ("PARAMS", "BYTES", [1])],
    ))
    text_steps = [
        ("tokenizer", {"TEXT": "TEXT"}, {"IDS": "ids", "RID": "RID", "PARAMS": "PARAMS"}),
    ]
    return [
        tokenizer,
        identity("embed", "INT32", max_batch_size=0),
        PyModel("preprocess", PREPROCESS_PY,
                config([("RAW", "INT32", [-1])], [("PIXELS", "FP32", [-1])])),
        PyModel("square", SQUARE_PY, config([("X", "FP32", [-1])], [("Y", "FP32", [-1])])),
        identity("passthrough", "FP32", max_batch_size=0),
        PyModel("refuses", REFUSES_PY,
                config([("X", "INT32", [-1])], [("Y", "INT32", [-1])])),
        Ensemble(
            "ens_text",
            [("TEXT", "BYTES", [-1])],
            [("EMBEDDING", "INT32", [-1]), ("RID", "BYTES", [1]), ("PARAMS", "BYTES", [1])],
            text_steps + [("embed", {"INPUT0": "ids"}, {"OUTPUT0": "EMBEDDING"})],
        ),
        Ensemble(
            "ens_fanout",
            [("RAW", "INT32", [-1])],
            [("LEFT", "FP32", [-1]), ("RIGHT", "FP32", [-1])],
            [
                ("square", {"X": "pixels"}, {"Y": "LEFT"}),
                ("preprocess", {"RAW": "RAW"}, {"PIXELS": "pixels"}),
                ("passthrough", {"INPUT0": "pixels"}, {"OUTPUT0": "RIGHT"}),
            ],
        ),
        Ensemble(
            "ens_fail",
            [("TEXT", "BYTES", [-1])],
            [("OUT", "INT32", [-1])],
            [("tokenizer", {"TEXT": "TEXT"}, {"IDS": "ids"}),
             ("refuses", {"X": "ids"}, {"Y": "OUT"})],
        ),
        PyModel("slow", SLOW_PY, config([("X", "INT32", [-1])], [("Y", "INT32", [-1])])),
        identity("after_slow", "INT32", max_batch_size=0),
        Ensemble(
            "ens_slow",
            [("X", "INT32", [-1])],
            [("OUT", "INT32", [-1])],
            [("slow", {"X": "X"}, {"Y": "mid"}),
             ("after_slow", {"INPUT0": "mid"}, {"OUTPUT0": "OUT"})],
        ),
        Ensemble(
            "ens_missing",
            [("TEXT", "BYTES", [-1])],
            [("OUT", "INT32", [-1])],
            [("tokenizer", {"TEXT": "TEXT"}, {"IDS": "ids"}),
             ("nosuch", {"X": "ids"}, {"Y": "OUT"})],
        ),
    ]


ENSEMBLES = ["ens_text", "ens_fanout", "ens_fail", "ens_slow"]
WORDS = ["안녕하세요", "", "tokens"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    flags = ["--model-control-mode=explicit"] + [f"--load-model={e}" for e in ENSEMBLES]
    with serve(tmp_path_factory.mktemp("ensemble"), _models(), flags) as server:
        yield server


@pytest.fixture(params=["http", "grpc"])
def client(request, server):
    if request.param == "http":
        c = httpclient.InferenceServerClient(server.url)
        c.module = httpclient
    else:
        c = grpcclient.InferenceServerClient(server.grpc_url)
        c.module = grpcclient
    yield c
    c.close()


def _input(client, name, array, datatype):
    tensor = client.module.InferInput(name, list(array.shape), datatype)
    tensor.set_data_from_numpy(array)
    return tensor


def _stats(server, model):
    http = httpclient.InferenceServerClient(server.url)
    try:
        return http.get_inference_statistics(model)["model_stats"][0]
    finally:
        http.close()


def test_members_load_with_the_ensembles(server):
    http = httpclient.InferenceServerClient(server.url)
    for name in ENSEMBLES + ["tokenizer", "embed", "preprocess", "square", "passthrough"]:
        assert http.is_model_ready(name), name
    assert not http.is_model_ready("ens_missing")
    assert http.get_model_metadata("ens_text")["platform"] == "ensemble"
    http.close()


def test_tokenizer_feeds_numeric_model(client):
    """Seed 000: BYTES text -> token ids -> a numeric model; the request id
    and parameters reach the steps."""
    text = np.array([w.encode("utf-8") for w in WORDS], dtype=np.object_)
    result = client.infer(
        "ens_text", [_input(client, "TEXT", text, "BYTES")],
        request_id="req-42", parameters={"lang": "ko"},
    )
    assert result.as_numpy("EMBEDDING").tolist() == [len(w.encode("utf-8")) for w in WORDS]
    assert result.as_numpy("EMBEDDING").dtype == np.int32
    assert result.as_numpy("RID").tolist() == [b"req-42"]
    assert json.loads(result.as_numpy("PARAMS")[0])["lang"] == "ko"
    response = result.get_response()
    if isinstance(response, dict):
        assert (response["id"], response["model_name"]) == ("req-42", "ens_text")
    else:
        assert (response.id, response.model_name) == ("req-42", "ens_text")


def test_one_step_feeds_two_models(client):
    """Seed 002: one preprocessing step feeding two models (listed out of order)."""
    raw = np.array([2, 4, -6, 9], dtype=np.int32)
    result = client.infer("ens_fanout", [_input(client, "RAW", raw, "INT32")])
    pixels = raw.astype(np.float32) / 2
    np.testing.assert_array_equal(result.as_numpy("RIGHT"), pixels)
    np.testing.assert_array_equal(result.as_numpy("LEFT"), pixels * pixels)


def test_requested_output_only(client):
    raw = np.array([3], dtype=np.int32)
    wanted = client.module.InferRequestedOutput("RIGHT")
    result = client.infer("ens_fanout", [_input(client, "RAW", raw, "INT32")], outputs=[wanted])
    np.testing.assert_array_equal(result.as_numpy("RIGHT"), [1.5])
    assert result.as_numpy("LEFT") is None


def test_bad_input_is_refused_like_any_model(client):
    raw = np.array([1, 2], dtype=np.int32)
    with pytest.raises(InferenceServerException) as failed:
        client.infer("ens_text", [_input(client, "TEXT", raw, "INT32")])
    assert "expects 'BYTES'" in failed.value.message()


def test_failing_step_fails_the_request(client, server):
    text = np.array([b"abc"], dtype=np.object_)
    with pytest.raises(InferenceServerException) as failed:
        client.infer("ens_fail", [_input(client, "TEXT", text, "BYTES")])
    assert failed.value.message() == "in ensemble 'ens_fail', step refused this input"
    assert failed.value.status() in ("500", "StatusCode.INTERNAL")
    # The server goes on serving, the members too.
    result = client.infer("ens_text", [_input(client, "TEXT", text, "BYTES")])
    assert result.as_numpy("EMBEDDING").tolist() == [3]
    assert _stats(server, "ens_fail")["inference_stats"]["fail"]["count"] >= 1


def test_missing_member_names_it(server):
    http = httpclient.InferenceServerClient(server.url)
    with pytest.raises(InferenceServerException) as failed:
        http.load_model("ens_missing")
    assert "nosuch" in failed.value.message()
    assert not http.is_model_ready("ens_missing")
    assert http.is_model_ready("ens_text")
    http.close()


def test_statistics(server):
    """The ensemble counts its requests as one execution each, with its
    steps' compute times; each member counts its own requests."""
    before = {m: _stats(server, m) for m in ("ens_fanout", "preprocess", "square")}
    http = httpclient.InferenceServerClient(server.url)
    raw = np.array([1, 2], dtype=np.int32)
    for _ in range(3):
        tensor = httpclient.InferInput("RAW", [2], "INT32")
        tensor.set_data_from_numpy(raw)
        http.infer("ens_fanout", [tensor])
    http.close()
    after = {m: _stats(server, m) for m in before}

    def grew(model, key):
        return int(after[model][key]) - int(before[model][key])

    def grew_stat(model, stat, field="count"):
        return (int(after[model]["inference_stats"][stat][field])
                - int(before[model]["inference_stats"][stat][field]))

    assert grew("ens_fanout", "inference_count") == 3
    assert grew("ens_fanout", "execution_count") == 3
    assert grew_stat("ens_fanout", "success") == 3
    assert grew_stat("ens_fanout", "compute_infer") == 3
    assert grew_stat("ens_fanout", "compute_infer", "ns") > 0
    assert grew_stat("preprocess", "success") == 3
    assert grew_stat("square", "success") == 3
    assert grew("square", "inference_count") == 3


def test_cancelled_request_runs_no_further_step(server):
    """A request cancelled (here: its gRPC deadline passed) while its first
    step runs never reaches the second step on oxiserve. Triton 2.51 runs
    the second step all the same (checked here): only the first half holds there."""
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    x = grpcclient.InferInput("X", [1], "INT32")
    x.set_data_from_numpy(np.array([7], dtype=np.int32))
    with pytest.raises(InferenceServerException) as failed:
        grpc.infer("ens_slow", [x], client_timeout=0.3)
    # The client's deadline fires first (DEADLINE_EXCEEDED), unless the server's
    # timer wins the race on a loaded machine: tonic then answers CANCELLED
    # "Timeout expired" (see test_grpc_stream.py::test_unary_deadline).
    allowed = {"StatusCode.DEADLINE_EXCEEDED"}
    if TARGET == "oxiserve":
        allowed.add("StatusCode.CANCELLED")
    assert failed.value.status() in allowed, failed.value.message()
    time.sleep(2.5)  # the slow step ends; nothing follows it
    assert int(_stats(server, "slow")["inference_stats"]["success"]["count"]) == 1
    expected_after = 1 if TARGET == "triton" else 0
    assert int(_stats(server, "after_slow")["inference_count"]) == expected_after
    # The server goes on serving the ensemble.
    result = grpc.infer("ens_slow", [x])
    assert result.as_numpy("OUT").tolist() == [7]
    grpc.close()
