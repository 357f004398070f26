"""Ensembles with a decoupled step, as LLM pipelines on Triton are built: a
"tokenizer" (text_to_codes), a decoupled model that streams one response
per code (repeat), and a "detokenizer" (code_to_text) that runs once per
streamed response. Each response of the decoupled step flows through the
later step and leaves the (decoupled) ensemble as its own response, over
gRPC streaming, generate_stream and the OpenAI API; the final flag comes
once, after the last."""

import queue

import numpy as np
import pytest
import requests
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from frontends import sse_events
from models import model_source
from python_models import PyModel, config, repeat_model, write_repo
from servers import Server

STEPS = """ensemble_scheduling { step [
  { model_name: "text_to_codes" model_version: -1
    input_map { key: "text_input" value: "text_input" }
    output_map { key: "CODES" value: "codes" } },
  { model_name: "repeat" model_version: -1
    input_map { key: "IN" value: "codes" }
    output_map { key: "OUT" value: "code" } },
  { model_name: "code_to_text" model_version: -1
    input_map { key: "CODE" value: "code" }
    output_map { key: "text_output" value: "text_output" } }
] }
"""
TEXT_IN_OUT = """max_batch_size: 0
input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] } ]
"""


def write_ensemble(repo, name, decoupled):
    policy = "model_transaction_policy { decoupled: true }\n" if decoupled else ""
    (repo / name / "1").mkdir(parents=True)
    (repo / name / "config.pbtxt").write_text(
        f'name: "{name}"\nplatform: "ensemble"\n' + TEXT_IN_OUT + policy + STEPS)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = write_repo(tmp_path_factory.mktemp("decoupled_ensemble") / "repo", [
        PyModel("text_to_codes", model_source("text_to_codes"),
                config([("text_input", "BYTES", [1])], [("CODES", "INT32", [-1])])),
        repeat_model(),
        PyModel("code_to_text", model_source("code_to_text"),
                config([("CODE", "INT32", [1])], [("text_output", "BYTES", [1])])),
    ])
    write_ensemble(repo, "stream_pipeline", decoupled=True)
    write_ensemble(repo, "single_pipeline", decoupled=False)
    with Server(repo) as s:
        yield s


def text_input(text):
    tensor = grpcclient.InferInput("text_input", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([text.encode()], dtype=np.object_))
    return [tensor]


def stream(server, model, text, parameters=None):
    """(pieces of text, errors, final flags) of one streamed request, in order."""
    got = queue.Queue()
    client = grpcclient.InferenceServerClient(server.grpc_url)
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    client.async_stream_infer(model, text_input(text), parameters=parameters,
                              enable_empty_final_response=True)
    events = []
    while True:
        result, error = got.get(timeout=30)
        if error is not None:
            events.append(("error", str(error)))
            break
        response = result.get_response()
        final = response.parameters["triton_final_response"].bool_param
        if response.outputs:
            events.append(("text", result.as_numpy("text_output")[0].decode()))
        if final:
            events.append(("final", None))
            break
    client.stop_stream()
    client.close()
    return events


def test_each_streamed_response_flows_through_the_later_steps(server):
    events = stream(server, "stream_pipeline", "hello")
    assert events == [("text", c) for c in "HELLO"] + [("final", None)]


def test_a_stream_of_no_response_ends_with_the_flag_alone(server):
    events = stream(server, "stream_pipeline", "")
    assert events == [("final", None)]


def test_a_step_error_ends_the_stream_with_it(server):
    # The error comes 0.3 s after B, long after A and B went through the
    # detokenizer; the responses still in the steps when it comes are lost.
    events = stream(server, "stream_pipeline", "abcd", {"error_at": 2, "delay_ms": 300})
    assert events[:2] == [("text", "A"), ("text", "B")]
    kind, message = events[-1]
    assert kind == "error" and "no response for index 2" in message, events
    assert "stream_pipeline" in message


def test_generate_stream_sends_one_event_per_response(server):
    r = requests.post(f"http://{server.url}/v2/models/stream_pipeline/generate_stream",
                      json={"text_input": "abc"}, timeout=30)
    assert r.status_code == 200, r.text
    assert [e["text_output"] for e in sse_events(r)] == ["A", "B", "C"]


def test_an_ensemble_with_a_decoupled_step_is_decoupled(server):
    # As in Triton, whatever its own configuration says.
    client = grpcclient.InferenceServerClient(server.grpc_url)
    config = client.get_model_config("single_pipeline", as_json=True)["config"]
    assert config["model_transaction_policy"]["decoupled"] is True
    with pytest.raises(InferenceServerException) as caught:
        client.infer("single_pipeline", text_input("x"))
    assert "doesn't support models with decoupled transaction policy" in str(caught.value)
    assert stream(server, "single_pipeline", "xy") == [("text", "X"), ("text", "Y"), ("final", None)]
    client.close()


def test_a_step_may_not_read_two_streams(tmp_path):
    steps = """ensemble_scheduling { step [
      { model_name: "repeat" model_version: -1
        input_map { key: "IN" value: "codes" } output_map { key: "OUT" value: "code" } },
      { model_name: "text_to_codes" model_version: -1
        input_map { key: "text_input" value: "text_input" } output_map { key: "CODES" value: "codes" } },
      { model_name: "mix" model_version: -1
        input_map { key: "A" value: "code" } input_map { key: "B" value: "codes" }
        output_map { key: "text_output" value: "text_output" } }
    ] }
    """
    repo = write_repo(tmp_path / "repo", [
        PyModel("text_to_codes", model_source("text_to_codes"),
                config([("text_input", "BYTES", [1])], [("CODES", "INT32", [-1])])),
        repeat_model(),
        PyModel("mix", model_source("code_to_text"),
                config([("A", "INT32", [1]), ("B", "INT32", [-1])], [("text_output", "BYTES", [1])])),
    ])
    (repo / "mixed" / "1").mkdir(parents=True)
    (repo / "mixed" / "config.pbtxt").write_text(
        'name: "mixed"\nplatform: "ensemble"\n' + TEXT_IN_OUT + steps)
    with Server(repo, ["--strict-readiness=false", "--exit-on-error=false"]) as server:
        client = grpcclient.InferenceServerClient(server.grpc_url)
        assert client.is_model_ready("mix") and not client.is_model_ready("mixed")
        # Triton names the ensemble where oxiserve names the step's model.
        log = server.output()
        assert "in ensemble mixed, step of model '" in log, log
        assert "' receives inputs originated from different decoupled models" in log, log
        client.close()


@pytest.mark.oxiserve_only
def test_the_openai_api_streams_the_pipeline(server):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"http://{server.url}/v1", api_key="unused")
    chunks = client.completions.create(model="stream_pipeline", prompt="hey", stream=True)
    assert "".join(c.choices[0].text for c in chunks) == "HEY"
    whole = client.completions.create(model="stream_pipeline", prompt="hey")
    assert whole.choices[0].text == "HEY"
    client.close()
