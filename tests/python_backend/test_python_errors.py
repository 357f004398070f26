"""Errors of Python models: a TritonError per response (each code to its HTTP
status and gRPC code), exceptions, bad `execute` returns, an exception in
`initialize`, and a decoupled model returning a list."""

import json
import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from grpc_helpers import expect_grpc_error
from helpers import Http, expect_error
from python_models import (DECOUPLED_RAISES_PY, DECOUPLED_RETURNS_LIST_PY,
                           FAULTY_MODEL_PY, INIT_FAILS_PY,
                           NO_CLASS_PY, NO_EXECUTE_PY, SYNTAX_ERROR_PY, faulty_model,
                           plain_model, serve)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [
        faulty_model(),
        plain_model("init_fails", INIT_FAILS_PY),
        plain_model("no_execute", NO_EXECUTE_PY),
        plain_model("no_class", NO_CLASS_PY),
        plain_model("syntax_error", SYNTAX_ERROR_PY),
        plain_model("dec_list", DECOUPLED_RETURNS_LIST_PY, decoupled=True),
        plain_model("dec_raises", DECOUPLED_RAISES_PY, decoupled=True),
    ]
    with serve(tmp_path_factory.mktemp("py_errors"), models, ["--exit-on-error=false"]) as s:
        yield s


def _body(mode):
    return {"inputs": [{"name": "MODE", "shape": [1], "datatype": "BYTES", "data": [mode]}]}


def _http(server, mode):
    with Http(server.url) as http:
        return http.infer("faulty", _body(mode))


def _grpc(server, mode):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([mode.encode()], dtype=np.object_))
    try:
        return client.infer("faulty", [tensor])
    finally:
        client.close()


PREFIX = "Failed to process the request(s) for model 'faulty_0_0', message: "

CODES = [
    # (TritonError code, HTTP status, gRPC code)
    ("UNKNOWN", 400, "UNKNOWN"),
    ("INTERNAL", 500, "INTERNAL"),
    ("NOT_FOUND", 404, "NOT_FOUND"),
    ("INVALID_ARG", 400, "INVALID_ARGUMENT"),
    ("UNAVAILABLE", 503, "UNAVAILABLE"),
    ("UNSUPPORTED", 501, "UNIMPLEMENTED"),
    ("ALREADY_EXISTS", 400, "ALREADY_EXISTS"),
    ("CANCELLED", 400, "CANCELLED"),
]


def test_ok(server):
    resp = _http(server, "ok")
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["data"] == [7]


def test_error_code_values(server):
    result = _grpc(server, "codes")
    codes = json.loads(result.as_numpy("INFO")[0])
    assert codes == {"UNKNOWN": 0, "INTERNAL": 1, "NOT_FOUND": 2, "INVALID_ARG": 3,
                     "UNAVAILABLE": 4, "UNSUPPORTED": 5, "ALREADY_EXISTS": 6,
                     "CANCELLED": 7, "default": 1, "message": "m"}


@pytest.mark.parametrize("code,status,grpc_code", CODES, ids=[c[0] for c in CODES])
def test_response_error_code(server, code, status, grpc_code):
    text = f"refused with {code}"
    assert expect_error(_http(server, f"code:{code}"), status) == text
    message = expect_grpc_error(lambda: _grpc(server, f"code:{code}"), grpc_code)
    assert message == text


def test_response_error_default_code(server):
    text = "refused with the default code"
    assert expect_error(_http(server, "default_code"), 500) == text
    assert expect_grpc_error(lambda: _grpc(server, "default_code"), "INTERNAL") == text


def _line(code):
    """The line of `code` in the faulty model's model.py (for tracebacks)."""
    (number,) = [i for i, l in enumerate(FAULTY_MODEL_PY.splitlines(), 1) if code in l]
    return number


def _traceback(server, code):
    """pybind11's "At:" traceback that Triton appends to an exception's text."""
    path = server.repo / "faulty" / "1" / "model.py"
    return f"\n\nAt:\n  {path}({_line(code)}): execute\n"


def test_exception_text_has_the_traceback(server):
    text = PREFIX + "TritonModelException: the model raised this" + _traceback(
        server, "the model raised this")
    assert expect_error(_http(server, "raise"), 500) == text
    assert expect_grpc_error(lambda: _grpc(server, "raise"), "INTERNAL") == text
    text = PREFIX + "ValueError: bad value 42" + _traceback(server, "bad value 42")
    assert expect_error(_http(server, "raise_value"), 500) == text
    assert _http(server, "ok").status_code == 200


@pytest.mark.oxiserve_only
def test_execute_returning_none(server):
    """Triton 2.51 takes a None return as "the model answered through its
    response senders" and, as none was used, never answers the request (the
    client waits forever). oxiserve fails the request instead."""
    text = PREFIX + "Expected a list in the execute return, found type '<class 'NoneType'>'."
    assert expect_error(_http(server, "none"), 500) == text
    assert _http(server, "ok").status_code == 200


BATCH_ERRORS = [
    ("wrong_count", "Number of InferenceResponse objects do not match the number of "
                    "InferenceRequest objects. InferenceRequest(s) size is:1, and "
                    "InferenceResponse(s) size is:2\n"),
    ("empty_list", "Number of InferenceResponse objects do not match the number of "
                   "InferenceRequest objects. InferenceRequest(s) size is:1, and "
                   "InferenceResponse(s) size is:0\n"),
    ("wrong_type", "Expected an 'InferenceResponse' object in the execute function return "
                   "list, found type '<class 'str'>'."),
]


@pytest.mark.parametrize("mode,text", BATCH_ERRORS, ids=[m for m, _ in BATCH_ERRORS])
def test_execute_fault(server, mode, text):
    assert expect_error(_http(server, mode), 500) == PREFIX + text
    assert expect_grpc_error(lambda: _grpc(server, mode), "INTERNAL") == PREFIX + text
    assert _http(server, "ok").status_code == 200


def _index(server):
    client = httpclient.InferenceServerClient(server.url)
    try:
        return {m["name"]: m for m in client.get_model_repository_index()}
    finally:
        client.close()


def test_exception_in_initialize(server):
    entry = _index(server)["init_fails"]
    assert entry["state"] == "UNAVAILABLE"
    path = server.repo / "init_fails" / "1" / "model.py"
    assert entry["reason"] == ("Internal: ValueError: initialize refused: no weights here"
                               f"\n\nAt:\n  {path}(3): initialize\n")
    with Http(server.url) as http:
        expect_error(http.get("/v2/models/init_fails/ready"), 400)
    assert _http(server, "ok").status_code == 200


def test_no_execute_method(server):
    """Triton loads it (READY); every request fails."""
    assert _index(server)["no_execute"]["state"] == "READY"
    body = {"inputs": [{"name": "INPUT0", "shape": [1], "datatype": "INT32", "data": [1]}]}
    with Http(server.url) as http:
        text = expect_error(http.infer("no_execute", body), 500)
    path = server.repo / "no_execute" / "1" / "model.py"
    assert text == ("Failed to process the request(s) for model 'no_execute_0_0', message: "
                    f"Python model {path} does not implement `execute` method.")


def test_no_model_class(server):
    entry = _index(server)["no_class"]
    assert entry["state"] == "UNAVAILABLE"
    # Triton imports model.py as the module "<version>.model".
    assert entry["reason"] == (
        "Internal: AttributeError: module '1.model' has no attribute 'TritonPythonModel'")


def test_syntax_error(server):
    entry = _index(server)["syntax_error"]
    assert entry["state"] == "UNAVAILABLE"
    assert entry["reason"] == "Internal: SyntaxError: invalid syntax (model.py, line 1)"


def _stream_one(server, model):
    got = queue.Queue()
    client = grpcclient.InferenceServerClient(server.grpc_url)
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    tensor = grpcclient.InferInput("INPUT0", [1], "INT32")
    tensor.set_data_from_numpy(np.array([1], dtype=np.int32))
    client.async_stream_infer(model, [tensor], enable_empty_final_response=True)
    items = [got.get(timeout=30)]
    while True:
        result, error = items[-1]
        if error is not None or result.get_response().parameters[
                "triton_final_response"].bool_param:
            break
        items.append(got.get(timeout=30))
    client.stop_stream()
    client.close()
    return items


def test_decoupled_returning_a_list(server):
    items = _stream_one(server, "dec_list")
    errors = [e.message() for _, e in items if e is not None]
    assert errors == [
        "Failed to process the request(s) for model 'dec_list_0_0', message: "
        "Python model 'dec_list_0_0' is using the decoupled mode and the execute "
        "function must return None."
    ]


def test_decoupled_raising_after_a_response(server):
    items = _stream_one(server, "dec_raises")
    assert items[0][1] is None
    assert items[0][0].as_numpy("OUTPUT0").tolist() == [1]
    errors = [e.message() for _, e in items if e is not None]
    path = server.repo / "dec_raises" / "1" / "model.py"
    assert errors == [
        "Failed to process the request(s) for model 'dec_raises_0_0', message: "
        "TritonModelException: decoupled execute raised after one response"
        f"\n\nAt:\n  {path}(10): execute\n"
    ]
