"""`--model-config-name` (a model's `configs/<name>.pbtxt` where it exists)
and `--model-load-retry-count` (a failed load tried again), as Triton 2.51."""

import pytest
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config
from servers import Server, run_to_exit

IDENTITY = config([("INPUT0", "INT32", [4])], [("OUTPUT0", "INT32", [4])], max_batch_size=8)


def _write_pair(repo, name):
    """`name` with config.pbtxt (max batch 8) and configs/alt.pbtxt (max batch 2)."""
    folder = PyModel(name, model_source("identity"), IDENTITY).write(repo)
    (folder / "configs").mkdir()
    alt = (folder / "config.pbtxt").read_text().replace("max_batch_size: 8", "max_batch_size: 2")
    (folder / "configs" / "alt.pbtxt").write_text(alt)
    return folder


def test_model_config_name_picks_the_named_config(tmp_path):
    repo = tmp_path / "repo"
    _write_pair(repo, "with_alt")
    PyModel("plain", model_source("identity"), IDENTITY).write(repo)
    with Server(repo, ["--model-config-name=alt"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert client.get_model_config("with_alt")["max_batch_size"] == 2
        # No configs/alt.pbtxt: config.pbtxt.
        assert client.get_model_config("plain")["max_batch_size"] == 8
        client.close()


def test_without_the_flag_config_pbtxt_is_read(tmp_path):
    repo = tmp_path / "repo"
    _write_pair(repo, "with_alt")
    with Server(repo) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert client.get_model_config("with_alt")["max_batch_size"] == 8
        client.close()


def _flaky(repo, failures):
    extra = f'parameters [ {{ key: "failures" value: {{ string_value: "{failures}" }} }} ]\n'
    return PyModel("flaky", model_source("flaky_init"),
                   config([("INPUT0", "INT32", [4])], [("OUTPUT0", "INT32", [4])],
                          max_batch_size=8, extra=extra)).write(repo)


def test_a_failed_load_is_tried_again(tmp_path):
    folder = _flaky(tmp_path / "repo", failures=2)
    with Server(tmp_path / "repo", ["--model-load-retry-count=2"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert client.is_model_ready("flaky")
        client.close()
    assert (folder / "attempts").read_text() == "3"


@pytest.mark.parametrize("retries", [0, 1])
def test_retries_run_out(tmp_path, retries):
    folder = _flaky(tmp_path / "repo", failures=2)
    status, output = run_to_exit(tmp_path / "repo", [f"--model-load-retry-count={retries}"])
    assert status not in (0, None), output
    assert "fails on purpose" in output
    assert (folder / "attempts").read_text() == str(retries + 1)
