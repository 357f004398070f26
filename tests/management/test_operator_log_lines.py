"""The log lines operators grep for, as Triton 2.51 writes them: one
"successfully loaded 'NAME'" per model, "ignore version directory" for a
folder that is not a version, "model not found in any model repository" for
a --load-model that names nothing, and "failed to start HTTP service ...
already in use" for a taken port."""

import shutil
import socket

import pytest

from models import identity, write_repository
from servers import TARGET, Server, run_to_exit


@pytest.fixture
def repo(tmp_path):
    repo = write_repository(tmp_path / "repo", [identity("m", "INT32")], TARGET)
    model = repo / "m"
    for extra in ("2", "07", "abc"):
        shutil.copytree(model / "1", model / extra)
    config = model / "config.pbtxt"
    config.write_text(config.read_text() + "\nversion_policy: { all { } }\n")
    return repo


def test_loading_and_version_folder_lines(repo):
    with Server(repo) as server:
        output = server.output()
    assert output.count("successfully loaded 'm'") == 1
    assert "ignore version directory '07' which contains leading zeros in its directory name" in output
    assert "ignore version directory 'abc' which fails to convert to integral number" in output


def test_a_load_model_of_nothing_says_not_found(repo):
    flags = ["--model-control-mode=explicit", "--load-model=nowhere"]
    status, output = run_to_exit(repo, flags)
    assert status == 1
    assert "model not found in any model repository" in output


def test_a_port_in_use_is_named(tmp_path):
    # An empty repository: Triton 2.51 does not exit after this error while
    # it holds Python models.
    empty = tmp_path / "empty"
    empty.mkdir()
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, output = run_to_exit(empty, [f"--http-port={port}"])
    assert status == 1
    assert "failed to start HTTP service: Unavailable - Socket" in output
    assert f"'0.0.0.0:{port}' already in use" in output
