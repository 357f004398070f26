"""EXECUTION_ENV_PATH: one model runs in a second virtual environment the test
creates (it reports `sys.executable`), the stub's compiled hot path loaded in both
interpreters; a path that does not exist is a clear load error. Triton takes only
packed (.tar.gz) environments there, so a plain venv folder is oxiserve's extension."""

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient

from python_models import args_model, serve


def _env_param(path):
    return ('parameters [ { key: "EXECUTION_ENV_PATH", value: { string_value: "'
            f'{path}" }} }} ]\n')


def _report(client, model):
    tensor = httpclient.InferInput("INPUT0", [1], "INT32")
    tensor.set_data_from_numpy(np.array([1], dtype=np.int32))
    return json.loads(client.infer(model, [tensor]).as_numpy("ARGS")[0])


@pytest.mark.oxiserve_only
def test_model_runs_in_its_own_venv(tmp_path):
    env = tmp_path / "second_env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    # numpy from the test venv, through a .pth file: the new venv stays a plain folder.
    site = subprocess.run(
        [str(env / "bin" / "python3"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "test_numpy.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    models = [args_model("in_env", extra=_env_param(env)), args_model("default_env")]
    with serve(tmp_path / "repo", models) as server:
        client = httpclient.InferenceServerClient(server.url)
        in_env = _report(client, "in_env")
        default = _report(client, "default_env")
        client.close()
        log = server.output()
    assert in_env["executable"].startswith(str(env) + "/"), in_env["executable"]
    assert not default["executable"].startswith(str(env) + "/")
    # Both zygotes (Python 3.11) load the stub's compiled frame coding.
    ready = [line for line in log.splitlines() if "ready to fork model instances" in line]
    assert len(ready) == 2 and all("frames coded in C" in line for line in ready), ready


def test_missing_env_path_is_a_load_error(tmp_path):
    missing = tmp_path / "no_such_env"
    models = [args_model("bad_env", extra=_env_param(missing)), args_model("good")]
    with serve(tmp_path / "repo", models, ["--exit-on-error=false"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        index = {m["name"]: m for m in client.get_model_repository_index()}
        assert client.is_model_ready("good")
        client.close()
    assert index["bad_env"] == {
        "name": "bad_env", "version": "1", "state": "UNAVAILABLE",
        "reason": f"Internal: Failed to get the canonical path for {missing}.",
    }
