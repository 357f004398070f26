"""`--http-header-forward-pattern` / `--grpc-header-forward-pattern`, as in
Triton 2.51 (its qa/L0_parameters): the headers of an inference request
whose names match (anywhere in the name, ignoring case unless the pattern
starts with `(?-i)`) reach the model as string parameters, over HTTP, gRPC
and a gRPC stream; the others do not."""

import json
import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config, serve
from servers import run_to_exit

HEADERS = {"header_1": "value_1", "my_header_1": "my_value_1",
           "my_header_2": 'a "quoted" value with a \\ backslash'}
FORWARDED = {k: v for k, v in HEADERS.items() if k.startswith("my_header")}


def _model():
    return PyModel("parameters", model_source("parameters"),
                   config([("INPUT0", "FP32", [1])], [("PARAMETERS", "BYTES", [1])]))


def _inputs(module):
    tensor = module.InferInput("INPUT0", [1], "FP32")
    tensor.set_data_from_numpy(np.array([1.0], dtype=np.float32))
    return [tensor]


def _parameters(result):
    return json.loads(result.as_numpy("PARAMETERS")[0])


def _over_every_protocol(server, headers):
    """The parameters the model saw over HTTP, gRPC and a gRPC stream. (Each
    client gets its own copy: tritonclient's HTTP client adds to the dict.)"""
    seen = []
    http = httpclient.InferenceServerClient(server.url)
    seen.append(_parameters(http.infer("parameters", _inputs(httpclient), headers=dict(headers))))
    http.close()
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    seen.append(_parameters(grpc.infer("parameters", _inputs(grpcclient), headers=dict(headers))))
    results = queue.Queue()
    grpc.start_stream(callback=lambda result, error: results.put(error or result),
                      headers=dict(headers))
    grpc.async_stream_infer("parameters", _inputs(grpcclient))
    seen.append(_parameters(results.get(timeout=30)))
    grpc.stop_stream()
    grpc.close()
    return seen


@pytest.mark.parametrize("pattern", ["my_header.*", "MY_HEADER.*"])
def test_matching_headers_become_parameters(tmp_path, pattern):
    flags = [f"--http-header-forward-pattern={pattern}",
             f"--grpc-header-forward-pattern={pattern}"]
    with serve(tmp_path / "repo", [_model()], flags) as server:
        for seen in _over_every_protocol(server, HEADERS):
            assert seen == FORWARDED, seen


def test_a_case_sensitive_pattern(tmp_path):
    # (tritonclient's HTTP client lowercases header names; gRPC metadata
    # keys are lowercase anyway, so the pattern finds nothing.)
    flags = ["--grpc-header-forward-pattern=(?-i)MY_HEADER.*"]
    with serve(tmp_path / "repo", [_model()], flags) as server:
        grpc = grpcclient.InferenceServerClient(server.grpc_url)
        seen = _parameters(grpc.infer("parameters", _inputs(grpcclient), headers=HEADERS))
        grpc.close()
    assert seen == {}


def test_without_the_flags_nothing_is_forwarded(tmp_path):
    with serve(tmp_path / "repo", [_model()]) as server:
        for seen in _over_every_protocol(server, HEADERS):
            assert seen == {}, seen


@pytest.mark.oxiserve_only  # Triton's message comes from RE2
def test_a_bad_pattern_stops_the_start_naming_the_flag(tmp_path):
    repo = tmp_path / "repo"
    _model().write(repo)
    status, output = run_to_exit(repo, ["--http-header-forward-pattern=(unclosed"])
    assert status not in (0, None), output
    assert "--http-header-forward-pattern: '(unclosed' is not a regular expression" in output
