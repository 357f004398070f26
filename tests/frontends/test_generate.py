"""Triton's generate extension: POST .../generate answers a model's one
response as a flat JSON object, POST .../generate_stream every response
as a Server-Sent Event. Inputs come from the members named like them,
everything else is a request parameter; errors as Triton words them."""

import time

import pytest
import requests
import tritonclient.grpc as grpcclient

from frontends import echo_model, generator_model, sse_events
from helpers import expect_error
from python_models import serve

EXACTLY_ONE = "generate expects model to produce exactly 1 response"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [generator_model(), generator_model("generator_plain", decoupled=False),
              echo_model()]
    with serve(tmp_path_factory.mktemp("generate"), models) as s:
        yield s


def post(server, route, body, model="generator", **kw):
    url = f"http://{server.url}/v2/models/{model}/{route}"
    data = body if isinstance(body, (str, bytes)) else None
    return requests.post(url, data=data, json=None if data is not None else body,
                         timeout=60, **kw)


def test_generate_answers_one_flat_object(server):
    r = post(server, "generate", {"PROMPT": "hello world", "STREAM": False})
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "application/json"
    # Members sorted by name, as Triton writes them; one element is a scalar.
    assert r.text == '{"TEXT":"hello world","model_name":"generator","model_version":"1"}'


def test_the_request_id_comes_back_when_not_empty(server):
    body = {"PROMPT": "hi", "STREAM": False, "id": "42"}
    assert post(server, "generate", body).json()["id"] == "42"
    body["id"] = ""
    assert "id" not in post(server, "generate", body).json()


def test_a_non_decoupled_model_answers_too(server):
    r = post(server, "generate", {"PROMPT": ["hi"], "STREAM": [False]}, model="generator_plain")
    assert r.status_code == 200, r.text
    assert r.json()["TEXT"] == "hi"


def test_generate_stream_sends_one_event_per_response(server):
    body = {"PROMPT": "hi", "STREAM": True, "REPETITION": 3}
    r = post(server, "generate_stream", body)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    events = sse_events(r)
    assert [e["TEXT"] for e in events] == ["hi"] * 3
    assert all(e["model_name"] == "generator" and e["model_version"] == "1" for e in events)


def test_generate_stream_of_no_response_is_empty(server):
    r = post(server, "generate_stream", {"PROMPT": "hi", "STREAM": True, "REPETITION": 0})
    assert r.status_code == 200
    assert sse_events(r) == []


def test_an_error_after_a_response_is_an_event_of_a_successful_stream(server):
    body = {"PROMPT": "hi", "STREAM": True, "REPETITION": 1, "FAIL_LAST": True}
    r = post(server, "generate_stream", body)
    assert r.status_code == 200
    assert sse_events(r) == [
        {"TEXT": "hi", "model_name": "generator", "model_version": "1"},
        {"error": "the last response failed"},
    ]


def test_an_error_first_sets_the_status_of_the_stream(server):
    body = {"PROMPT": "hi", "STREAM": True, "REPETITION": 0, "FAIL_LAST": True}
    r = post(server, "generate_stream", body)
    # Triton answers 400 here (it reads the code of an error it already
    # freed); oxiserve answers the error's own status (500 for a Python
    # model's error, as /infer does).
    assert r.status_code >= 400
    assert r.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    assert sse_events(r) == [{"error": "the last response failed"}]


@pytest.mark.parametrize("repetition", [0, 2])
def test_generate_needs_exactly_one_response(server, repetition):
    body = {"PROMPT": "hi", "STREAM": True, "REPETITION": repetition}
    r = post(server, "generate", body)
    assert r.headers["Content-Type"] == "application/json"
    assert EXACTLY_ONE in r.json()["error"]


# Triton 2.51 sends this error with status 200 (the status of its first
# response, sent before it counts them); oxiserve fails the request.
@pytest.mark.oxiserve_only
def test_generate_fails_with_another_response_count(server):
    r = post(server, "generate", {"PROMPT": "hi", "STREAM": True, "REPETITION": 2})
    expect_error(r, 500, EXACTLY_ONE)


def test_values_take_the_shape_of_the_input(server):
    body = {"TEXT": "a", "INTS": 5, "FLOATS": [[1.5], [2]], "FLAG": True,
            "MATRIX": [1, 2, 3, 4], "U8": [1, 2, 3, 4, 5, 6]}
    r = post(server, "generate", body, model="echo")
    assert r.status_code == 200, r.text
    assert r.json() == {
        "OUT_TEXT": "a", "OUT_INTS": 5, "OUT_FLOATS": [1.5, 2.0], "OUT_FLAG": True,
        "OUT_MATRIX": [1, 2, 3, 4], "OUT_U8": [1, 2, 3, 4, 5, 6],
        "model_name": "echo", "model_version": "1",
    }
    r = post(server, "generate", {"TEXT": "a", "INTS": []}, model="echo")
    assert r.json()["OUT_INTS"] == []


def test_an_output_of_no_element_is_an_empty_array(server):
    body = {"PROMPT": "hi", "STREAM": False, "OUTPUT_0_DIM": True}
    assert post(server, "generate", body).json()["TEXT"] == []


def test_the_parameters_object_maps_like_the_top_level(server):
    body = {"PROMPT": "hi", "parameters": {"STREAM": True, "REPETITION": 2}}
    r = post(server, "generate_stream", body)
    assert r.status_code == 200, r.text
    assert [e["TEXT"] for e in sse_events(r)] == ["hi", "hi"]


def test_the_client_going_away_cancels_the_stream(server):
    body = {"PROMPT": "hi", "STREAM": True, "REPETITION": 3, "DELAY": 1}
    r = post(server, "generate_stream", body, stream=True)
    r.close()
    time.sleep(0.5)
    assert requests.get(f"http://{server.url}/v2/health/live", timeout=10).status_code == 200
    assert post(server, "generate", {"PROMPT": "ok", "STREAM": False}).json()["TEXT"] == "ok"


@pytest.mark.parametrize("route", ["generate", "generate_stream"])
def test_missing_inputs_are_named(server, route):
    expect_error(post(server, route, {"abc": 123}), 400,
                 "expected number of inputs between 2 and 3 but got 0",
                 "missing required input(s) ['PROMPT','STREAM']")
    expect_error(post(server, route, {"PROMPT": "hello"}), 400,
                 "expected number of inputs between 2 and 3 but got 1")


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"PROMPT": 123, "STREAM": False}, 500, "attempt to access JSON non-string as string"),
        ({"PROMPT": "hi", "STREAM": "false"}, 500, "attempt to access JSON non-boolean as boolean"),
        ({"PROMPT": True, "STREAM": 123}, 500, "non-string as string"),
        ({"STREAM": 123, "PROMPT": True}, 500, "non-boolean as boolean"),
        ({"PROMPT": {"USER": "x"}, "STREAM": True}, 500, "non-string as string"),
        ({"PROMPT": "hi", "STREAM": False, "id": 5}, 500, "Unable to parse 'id'"),
        ({"PROMPT": "hi", "STREAM": True, "PARAMS": {"a": 1}}, 400,
         "parameter 'PARAMS' has invalid type"),
        ({"PROMPT": "hi", "STREAM": True, "parameters": 1}, 500,
         "Expected JSON object for keyword: 'parameters'"),
        ({"PROMPT": "hi", "STREAM": True, "parameters": {"nested": {"a": 1}}}, 400,
         "Converting keyword: 'parameters': parameter 'nested' has invalid type"),
        ({"PROMPT": "hi", "STREAM": True, "parameters": {"STREAM": False}}, 400,
         "Converting keyword: 'parameters': [request id: <id_unknown>] input 'STREAM' already "
         "exists in request"),
        ('{"PROMPT": "hi", "STREAM": false, "STREAM": true, "PROMPT": "dup"}', 400,
         "input 'STREAM' already exists in request"),
        ("[1, 2]", 500, "attempt to get members for non-object"),
        ("garbage", 500, "failed to parse the request JSON buffer"),
    ],
)
def test_bad_requests_are_refused_in_tritons_words(server, body, status, message):
    expect_error(post(server, "generate", body), status, message)


@pytest.mark.parametrize(
    "body, message",
    [
        ({"TEXT": "a", "FLOATS": [1]}, "The schema can not convert input 'FLOATS'"),
        ({"TEXT": "a", "MATRIX": [1, 2, 3]}, "The schema can not convert input 'MATRIX'"),
        ({"TEXT": ["a", "b"]}, "The schema can not convert input 'TEXT'"),
    ],
)
def test_values_that_do_not_fit_the_shape_are_refused(server, body, message):
    expect_error(post(server, "generate", body, model="echo"), 400, message)


@pytest.mark.parametrize(
    "body, message",
    [
        ({"TEXT": "a", "INTS": 1.5}, "non-signed-integer as signed-integer"),
        ({"TEXT": "a", "U8": [-1, 2, 3]}, "non-unsigned-integer as unsigned-integer"),
        ({"TEXT": "a", "FLOATS": ["x", 1]}, "non-number as double"),
    ],
)
def test_values_of_another_json_type_are_refused(server, body, message):
    expect_error(post(server, "generate", body, model="echo"), 500, message)


def test_unknown_models_and_versions_are_not_found(server):
    expect_error(post(server, "generate", {"PROMPT": "x"}, model="nope"), 404,
                 "Request for unknown model: 'nope' is not found")
    body = {"PROMPT": "hi", "STREAM": False}
    expect_error(post(server, "generate", body, model="generator/versions/2"), 404,
                 "Request for unknown model: 'generator' version 2 is not found")
    assert post(server, "generate", body, model="generator/versions/x").status_code == 404


def test_a_compressed_body_is_refused(server):
    r = post(server, "generate", '{"PROMPT": "hi", "STREAM": false}',
             headers={"Content-Encoding": "gzip"})
    expect_error(r, 400, "Unsupported content-encoding, only 'identity' is supported.")


def test_generate_takes_post_only(server):
    r = requests.get(f"http://{server.url}/v2/models/generator/generate", timeout=10)
    assert r.status_code == 405


def test_generate_is_not_listed_as_an_extension(server):
    # As Triton: the endpoint is there, the extension is not in the list.
    extensions = requests.get(f"http://{server.url}/v2", timeout=10).json()["extensions"]
    assert "generate" not in extensions
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        assert "generate" not in client.get_server_metadata().extensions
    finally:
        client.close()

