"""The logging and trace extensions over gRPC: LogSettings and TraceSetting."""

import pytest
from tritonclient.grpc import service_pb2

from grpc_helpers import Stub, expect_grpc_error, expect_rpc_error

DEFAULTS = {
    "log_file": "",
    "log_info": True,
    "log_warning": True,
    "log_error": True,
    "log_verbose_level": 0,
    "log_format": "default",
}


def _settings(response):
    out = {}
    for key, value in response.settings.items():
        out[key] = getattr(value, value.WhichOneof("parameter_choice"))
    return out


@pytest.fixture
def restore_logging(grpc_client):
    yield
    grpc_client.update_log_settings({"log_verbose_level": 0, "log_info": True})


@pytest.fixture(scope="module")
def stub(main_server):
    s = Stub(main_server.grpc_url)
    yield s
    s.close()


def test_log_defaults(grpc_client, client):
    assert _settings(grpc_client.get_log_settings()) == DEFAULTS
    assert client.get_log_settings() == DEFAULTS


def test_log_update_and_read_back(grpc_client, client, restore_logging):
    changed = grpc_client.update_log_settings({"log_verbose_level": 2, "log_info": False})
    assert _settings(changed) == {**DEFAULTS, "log_verbose_level": 2, "log_info": False}
    # One server, one set of settings: HTTP sees the change.
    assert client.get_log_settings()["log_verbose_level"] == 2
    restored = grpc_client.update_log_settings({"log_verbose_level": 0, "log_info": True})
    assert _settings(restored) == DEFAULTS


def _log_request(**settings):
    request = service_pb2.LogSettingsRequest()
    for key, value in settings.items():
        request.settings[key].CopyFrom(service_pb2.LogSettingsRequest.SettingValue(**value))
    return request


@pytest.mark.parametrize(
    "settings,code,needle",
    [
        ({"log_file": {"string_param": "/tmp/x.log"}}, "UNIMPLEMENTED",
         "log file location can not be updated through network protocol"),
        ({"log_info": {"uint32_param": 1}}, "INVALID_ARGUMENT", "expect boolean for 'log_info'"),
        ({"log_verbose_level": {"bool_param": True}}, "INVALID_ARGUMENT",
         "expect int32 for 'log_verbose_level'"),
        ({"log_format": {"bool_param": True}}, "INVALID_ARGUMENT",
         "expect string for 'log_format'"),
        ({"log_format": {"string_param": "fancy"}}, "INVALID_ARGUMENT",
         "invalid argument for log_format, got: fancy"),
    ],
)
def test_bad_log_update(stub, grpc_client, settings, code, needle):
    expect_rpc_error(lambda: stub.LogSettings(_log_request(**settings)), code, needle)
    assert _settings(grpc_client.get_log_settings()) == DEFAULTS


def test_trace_settings_report_tracing_off(grpc_client):
    settings = grpc_client.get_trace_settings(as_json=True)["settings"]
    assert settings["trace_level"] == {"value": ["OFF"]}
    assert settings["trace_rate"] == {"value": ["1000"]}
    assert settings["trace_count"] == {"value": ["-1"]}
    assert settings["trace_mode"] == {"value": ["triton"]}
    model = grpc_client.get_trace_settings("id_fp32", as_json=True)["settings"]
    assert model["trace_level"] == {"value": ["OFF"]}


def test_trace_file_cannot_change(grpc_client):
    expect_grpc_error(
        lambda: grpc_client.update_trace_settings(settings={"trace_file": "/tmp/t.json"}),
        "UNIMPLEMENTED",
        "trace file location can not be updated through network protocol",
    )
