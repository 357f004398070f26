"""The logging extension: GET and POST /v2/logging."""

import pytest

from helpers import expect_error

DEFAULTS = {
    "log_file": "",
    "log_info": True,
    "log_warning": True,
    "log_error": True,
    "log_verbose_level": 0,
    "log_format": "default",
}


@pytest.fixture
def restore_logging(client):
    yield
    client.update_log_settings({"log_verbose_level": 0, "log_info": True})


def test_defaults(client, http):
    assert client.get_log_settings() == DEFAULTS
    assert http.get("/v2/logging").json() == DEFAULTS


def test_update_and_read_back(client, restore_logging):
    changed = client.update_log_settings({"log_verbose_level": 2, "log_info": False})
    assert changed == {**DEFAULTS, "log_verbose_level": 2, "log_info": False}
    assert client.get_log_settings() == changed
    restored = client.update_log_settings({"log_verbose_level": 0, "log_info": True})
    assert restored == DEFAULTS


def test_empty_update_changes_nothing(http):
    resp = http.post("/v2/logging", {})
    assert resp.status_code == 200, resp.text
    assert resp.json() == DEFAULTS


def test_unknown_setting_is_ignored(http):
    """Triton answers 200 and leaves the settings as they were."""
    resp = http.post("/v2/logging", {"no_such_setting": 1})
    assert resp.status_code == 200, resp.text
    assert resp.json() == DEFAULTS


@pytest.mark.parametrize(
    "body,needle",
    [('{"log_verbose_level": "x"}', "unsigned"), ('{"log_info": 3}', "bool"), ("nope", "")],
    ids=["string_level", "int_flag", "not_json"],
)
def test_bad_update(http, body, needle):
    """Triton answers 500 for a wrongly typed value or a body that is not JSON."""
    expect_error(http.post("/v2/logging", body), 500, needle)
    assert http.get("/v2/logging").json() == DEFAULTS
