"""The trace extension: GET/POST /v2/trace/setting and
/v2/models/{model}/trace/setting, and gRPC TraceSetting, with Triton's
replies and error texts (Triton mode, a trace file given, tracing off)."""

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.grpc import service_pb2

from grpc_helpers import Stub, expect_rpc_error
from helpers import Http, expect_error
from python_models import serve
from tracing import models


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    return str(tmp_path_factory.mktemp("trace_settings") / "trace.json")


@pytest.fixture(scope="module")
def server(tmp_path_factory, trace_file):
    repo = tmp_path_factory.mktemp("trace_settings_repo")
    with serve(repo, models(), [f"--trace-config=triton,file={trace_file}"]) as server:
        yield server


@pytest.fixture(scope="module")
def http(server):
    with Http(server.url) as h:
        yield h


@pytest.fixture(scope="module")
def stub(server):
    s = Stub(server.grpc_url)
    yield s
    s.close()


@pytest.fixture
def defaults(trace_file):
    return {
        "trace_level": ["OFF"],
        "trace_rate": "1000",
        "trace_count": "-1",
        "log_frequency": "0",
        "trace_file": trace_file,
        "trace_mode": "triton",
    }


@pytest.fixture
def restore(http):
    """Back to the command line's settings after the test."""
    yield
    for model in ("simple", "other"):
        reset = {"trace_level": None, "trace_rate": None, "trace_count": None,
                 "log_frequency": None}
        assert http.post(f"/v2/models/{model}/trace/setting", reset).status_code == 200
    clear = {"trace_level": None, "trace_rate": None, "trace_count": None, "log_frequency": None}
    assert http.post("/v2/trace/setting", clear).status_code == 200


def grpc_settings(response):
    return {key: list(value.value) for key, value in response.settings.items()}


def as_lists(reply):
    """An HTTP reply in the gRPC form: every value a list."""
    return {k: v if isinstance(v, list) else [v] for k, v in reply.items()}


def test_defaults(http, server, defaults):
    assert http.get("/v2/trace/setting").json() == defaults
    assert http.get("/v2/models/simple/trace/setting").json() == defaults
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        assert grpc_settings(client.get_trace_settings()) == as_lists(defaults)
        assert grpc_settings(client.get_trace_settings("simple")) == as_lists(defaults)


def test_trace_is_a_listed_extension(server):
    with httpclient.InferenceServerClient(server.url) as client:
        http_extensions = client.get_server_metadata()["extensions"]
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        grpc_extensions = client.get_server_metadata(as_json=True)["extensions"]
    assert "trace" in http_extensions
    assert grpc_extensions == http_extensions


def test_global_update_and_model_fallback(http, defaults, restore):
    reply = http.post("/v2/trace/setting", {"trace_level": ["TIMESTAMPS"], "trace_rate": "5"})
    assert reply.status_code == 200, reply.text
    changed = {**defaults, "trace_level": ["TIMESTAMPS"], "trace_rate": "5"}
    assert reply.json() == changed
    # Models without settings of their own follow the global ones.
    assert http.get("/v2/models/simple/trace/setting").json() == changed
    # A model's own settings, and the rest from the global ones, also after
    # the global ones change.
    own = http.post("/v2/models/simple/trace/setting", {"trace_count": "10", "trace_rate": "3"})
    assert own.json() == {**changed, "trace_count": "10", "trace_rate": "3"}
    http.post("/v2/trace/setting", {"log_frequency": "7", "trace_rate": "9"})
    assert http.get("/v2/models/simple/trace/setting").json() == {
        **changed, "trace_count": "10", "trace_rate": "3", "log_frequency": "7"}
    assert http.get("/v2/models/other/trace/setting").json()["trace_rate"] == "9"
    # null clears a model's own value: it follows the global one again.
    cleared = http.post("/v2/models/simple/trace/setting", {"trace_rate": None}).json()
    assert cleared["trace_rate"] == "9" and cleared["trace_count"] == "10"
    # null clears a global value: back to the command line's.
    http.post("/v2/trace/setting", {"trace_rate": None, "trace_level": None})
    assert http.get("/v2/trace/setting").json() == {**defaults, "log_frequency": "7"}


def test_levels_and_numbers_read_as_triton_reads_them(http, defaults, restore):
    reply = http.post("/v2/trace/setting", {"trace_level": ["TIMESTAMPS", "TENSORS"],
                                            "trace_rate": " 12abc", "log_frequency": "-2"})
    assert reply.json() == {**defaults, "trace_level": ["TIMESTAMPS", "TENSORS"],
                            "trace_rate": "12", "log_frequency": "4294967294"}
    # Unknown level names and settings are ignored; an empty body changes nothing.
    before = reply.json()
    assert http.post("/v2/trace/setting", {"trace_level": ["BOGUS"]}).json() == before
    assert http.post("/v2/trace/setting", {"no_such_setting": "1"}).json() == before
    assert http.post("/v2/trace/setting", {}).json() == before
    off = http.post("/v2/trace/setting", {"trace_level": ["OFF"]}).json()
    assert off["trace_level"] == ["OFF"]


@pytest.mark.parametrize(
    "body,status,needle",
    [
        ('{"trace_file": "/tmp/other.json"}', 501,
         "trace file location can not be updated through network protocol"),
        ('{"trace_rate": "abc"}', 400, "Unable to parse 'trace_rate', got: abc"),
        ('{"trace_rate": "99999999999"}', 400,
         "Unable to parse 'trace_rate', value is out of range [ 0, 4294967295 ], got: 99999999999"),
        ('{"trace_count": "-5"}', 400, "Unable to parse 'trace_count'. Expecting value >= -1, got:-5"),
        ('{"trace_count": "x"}', 400, "Unable to parse 'trace_count', got: x"),
        ('{"trace_count": "99999999999"}', 400,
         "Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: 99999999999"),
        ('{"log_frequency": "x"}', 400, "Unable to parse 'log_frequency', got: x"),
        ('{"trace_level": ["OFF", "TIMESTAMPS"]}', 400,
         "Expect only one trace level 'OFF' is specified"),
        ('{"trace_level": ["TIMESTAMPS"], "trace_rate": "0"}', 400,
         "Attempting to set invalid trace setting :sample rate must be non-zero"),
        ('{"trace_rate": 5}', 500, "attempt to access JSON non-string as string"),
        ('{"trace_level": "TIMESTAMPS"}', 500, "attempt to access JSON non-array as array"),
        ('{"trace_level": [1]}', 500, "attempt to access JSON non-string as string"),
        ("nope", 500, "failed to parse the request JSON buffer"),
        ("", 500, "failed to parse the request JSON buffer"),
    ],
    ids=["file", "rate_text", "rate_range", "count_low", "count_text", "count_range",
         "frequency_text", "off_and_more", "rate_zero", "rate_number", "level_string",
         "level_number", "not_json", "empty"],
)
def test_bad_updates(http, defaults, body, status, needle):
    """Nothing changes: a bad update is refused as a whole."""
    reply = http.post("/v2/trace/setting", body)
    expect_error(reply, status, needle)
    assert http.get("/v2/trace/setting").json() == defaults


def test_a_setting_that_traces_nothing_is_refused_unless_off(http, defaults, restore):
    """Level TIMESTAMPS with count 0 samples nothing: refused, with no reason."""
    expect_error(
        http.post("/v2/trace/setting", {"trace_level": ["TIMESTAMPS"], "trace_count": "0"}),
        400,
        "Attempting to set invalid trace setting :",
    )
    # With tracing off, anything goes.
    assert http.post("/v2/trace/setting", {"trace_rate": "0"}).json()["trace_rate"] == "0"


def test_unknown_model(http, stub):
    for method in ("get", "post"):
        reply = getattr(http, method)("/v2/models/nosuch/trace/setting")
        expect_error(reply, 400, "Request for unknown model : nosuch")
    request = service_pb2.TraceSettingRequest(model_name="nosuch")
    expect_rpc_error(lambda: stub.TraceSetting(request), "INVALID_ARGUMENT",
                     "Request for unknown model : nosuch")


def test_versioned_path_and_other_methods(http):
    expect_error(http.get("/v2/models/simple/versions/1/trace/setting"), 404, "Not Found")
    expect_error(http.session.put(http.base + "/v2/trace/setting", data="{}"), 405,
                 "Method Not Allowed")


def test_grpc_update_and_clear(server, defaults, restore):
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        changed = client.update_trace_settings(
            "simple", {"trace_level": ["TIMESTAMPS"], "trace_rate": "4"})
        assert grpc_settings(changed) == as_lists(
            {**defaults, "trace_level": ["TIMESTAMPS"], "trace_rate": "4"})
        # None clears (an empty value list).
        cleared = client.update_trace_settings("simple", {"trace_rate": None})
        assert grpc_settings(cleared)["trace_rate"] == ["1000"]
    with httpclient.InferenceServerClient(server.url) as client:
        assert client.get_trace_settings("simple")["trace_level"] == ["TIMESTAMPS"]


def _trace_request(**settings):
    request = service_pb2.TraceSettingRequest()
    for key, values in settings.items():
        request.settings[key].CopyFrom(service_pb2.TraceSettingRequest.SettingValue(value=values))
    return request


@pytest.mark.parametrize(
    "settings,code,needle",
    [
        ({"trace_file": ["/tmp/x.json"]}, "UNIMPLEMENTED",
         "trace file location can not be updated through network protocol"),
        ({"trace_rate": ["1", "2"]}, "INVALID_ARGUMENT", "expect only 1 value for 'trace_rate'"),
        ({"trace_count": ["-5"]}, "INVALID_ARGUMENT",
         "Unable to parse 'trace_count'. Expecting value >= -1, got: -5"),
        ({"log_frequency": ["x"]}, "INVALID_ARGUMENT", "Unable to parse 'log_frequency', got: x"),
        ({"trace_level": ["OFF", "TENSORS"]}, "INVALID_ARGUMENT",
         "Expect only one trace level 'OFF' is specified"),
    ],
    ids=["file", "two_rates", "count_low", "frequency_text", "off_and_more"],
)
def test_grpc_bad_updates(stub, server, defaults, settings, code, needle):
    expect_rpc_error(lambda: stub.TraceSetting(_trace_request(**settings)), code, needle)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        assert grpc_settings(client.get_trace_settings()) == as_lists(defaults)
