"""The Python backend's zygote (the warm process that forks every model
instance): when it is killed, the server reaps it at once and the next
instance to start forks from a new one; unloading a model then ends that
model's processes only, whichever thread started the zygote they came from.
oxiserve only: Triton starts each stub on its own, without a zygote."""

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import wait_for
from python_models import crash_model, serve

pytestmark = pytest.mark.oxiserve_only

FLAGS = ["--model-control-mode=explicit", "--load-model=first", "--load-model=second"]


def _report(client, model):
    """The pid of `model`'s instance process and of its parent, the zygote."""
    mode = httpclient.InferInput("MODE", [1], "BYTES")
    mode.set_data_from_numpy(np.array([b"ok"], dtype=np.object_))
    return json.loads(client.infer(model, [mode]).as_numpy("OUTPUT0")[0])


def _children(pid):
    """{pid: state letter} of the processes whose parent is `pid`."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended while we looked
        if int(fields[1]) == pid:
            found[int(stat.parent.name)] = fields[0]
    return found


def _defunct_children(server):
    return [pid for pid, state in _children(server.proc.pid).items() if state == "Z"]


def _kill_zygote(server, client):
    """SIGKILLs the zygote of `first` and `second`; returns once the server
    saw both instance processes die with it."""
    reports = {m: _report(client, m) for m in ("first", "second")}
    zygote = reports["first"]["ppid"]
    assert reports["second"]["ppid"] == zygote
    assert _children(server.proc.pid).get(zygote) not in (None, "Z")
    os.kill(zygote, signal.SIGKILL)
    for model, report in reports.items():
        died = f"'{model}_0_0' (pid {report['pid']}) exited unexpectedly"
        wait_for(lambda: died in server.output(), timeout=10, what=f"{model}'s death")
    return zygote


@pytest.fixture
def server(tmp_path):
    models = [crash_model("first"), crash_model("second"), crash_model("third")]
    with serve(tmp_path / "repo", models, FLAGS) as s:
        client = httpclient.InferenceServerClient(s.url)
        yield s, client
        client.close()


def test_killed_zygote_is_reaped_and_replaced(server):
    server, client = server
    zygote = _kill_zygote(server, client)
    wait_for(lambda: not _defunct_children(server), timeout=10,
             what="the server to reap its killed zygote (a defunct child remains)")
    again = {m: _report(client, m) for m in ("first", "second")}
    assert again["first"]["ppid"] == again["second"]["ppid"] != zygote


def test_unload_ends_only_that_models_processes(server):
    server, client = server
    _kill_zygote(server, client)
    # `first` restarts its process: on its own instance thread, which
    # starts the new zygote that `third` and `second` then fork from too.
    zygote = _report(client, "first")["ppid"]
    client.load_model("third")
    before = {m: _report(client, m) for m in ("second", "third")}
    assert all(r["ppid"] == zygote for r in before.values()), before
    logged = len(server.output())
    client.unload_model("first")  # its instance thread ends
    assert not client.is_model_ready("first")
    assert {m: _report(client, m) for m in ("second", "third")} == before
    wait_for(lambda: not _defunct_children(server), timeout=10,
             what="no defunct child of the server (a zygote that died)")
    assert set(_children(zygote)) >= {r["pid"] for r in before.values()}
    assert {m: _report(client, m) for m in ("second", "third")} == before
    assert "exited unexpectedly" not in server.output()[logged:]
