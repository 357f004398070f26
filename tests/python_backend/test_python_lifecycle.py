"""Python model lifecycle: explicit load/unload runs `finalize`, a reload picks
up an edited model.py, a 24-model repository comes up ready, and
`pb_utils.Logger` lines reach the server log (VERBOSE only with --log-verbose)."""

import re

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import wait_for
from python_models import life_model, serve, write_repo
from servers import Server


def _infer(client, model):
    tensor = httpclient.InferInput("INPUT0", [1], "INT32")
    tensor.set_data_from_numpy(np.array([1], dtype=np.int32))
    return client.infer(model, [tensor]).as_numpy("OUTPUT0")[0].decode()


@pytest.fixture
def explicit(tmp_path):
    repo = write_repo(tmp_path / "repo", [life_model("life"), life_model("editable")])
    with Server(repo, ["--model-control-mode=explicit"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        yield server, client, repo
        client.close()


def test_unload_runs_finalize(explicit):
    _, client, repo = explicit
    marker = repo / "life" / "finalized"
    client.load_model("life")
    assert _infer(client, "life") == "v1"
    assert not marker.exists()
    client.unload_model("life")
    text = wait_for(lambda: marker.exists() and marker.read_text(), timeout=30,
                    what="finalize")
    assert text.startswith("finalized v1 ")
    assert not client.is_model_ready("life")


def test_reload_picks_up_edited_model(explicit):
    _, client, repo = explicit
    client.load_model("editable")
    assert _infer(client, "editable") == "v1"
    life_model("editable", "v2").write(repo)
    client.load_model("editable")
    assert _infer(client, "editable") == "v2"
    marker = repo / "editable" / "finalized"
    text = wait_for(lambda: marker.exists() and marker.read_text(), timeout=30,
                    what="the old instance's finalize")
    assert text.startswith("finalized v1 ")


def test_24_models_become_ready(tmp_path):
    models = [life_model(f"m{i:02d}", f"v{i}") for i in range(24)]
    with serve(tmp_path / "repo", models) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert client.is_server_ready()
        index = client.get_model_repository_index()
        assert len(index) == 24 and all(m["state"] == "READY" for m in index)
        assert [_infer(client, f"m{i:02d}") for i in (0, 11, 23)] == ["v0", "v11", "v23"]
        client.close()


def _log_lines(server):
    return [line for line in server.output().splitlines() if "life-log" in line]


# Triton's log layout; the message is quoted (JSON-style) as in all its lines.
LINE = re.compile(r'^([IWEV])\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ model\.py:(\d+)\] "(.*)"$')


@pytest.mark.parametrize("verbose", [False, True], ids=["default", "log-verbose"])
def test_logger_levels(tmp_path, verbose):
    flags = ["--log-verbose=1"] if verbose else []
    with serve(tmp_path / "repo", [life_model("life")], flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        _infer(client, "life")
        client.close()
        wait_for(lambda: any("from execute" in l for l in _log_lines(server)), timeout=10,
                 what="the execute log line")
        lines = _log_lines(server)
    parsed = []
    for line in lines:
        match = LINE.match(line)
        assert match, line
        parsed.append((match.group(1), int(match.group(2)), match.group(3)))
    expected = [
        ("I", 13, "life-log info from initialize"),
        ("W", 14, "life-log warning from initialize"),
        ("E", 15, "life-log error from initialize"),
    ]
    if verbose:  # Triton prints VERBOSE lines with an "I" too
        expected += [
            ("I", 16, "life-log verbose from initialize"),
            ("I", 17, "life-log log() at VERBOSE"),
        ]
    expected += [
        ("I", 18, "life-log log() default level"),
        ("I", 21, "life-log info from execute"),
    ]
    assert parsed == expected
