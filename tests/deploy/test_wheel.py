"""`pip install oxiserve`: the wheel scripts/wheel.sh builds (python/pyproject.toml)
installed with pip into a fresh virtual environment, from PyPI's numpy and
onnxruntime wheels at the versions the suite pins. That environment's own
`oxiserve`, started with no variable pointing anywhere and no other Python
on PATH, serves an ONNX model (the environment's onnxruntime library) and a
Python model (the environment's Python with its numpy); its `oxiserve-perf`
measures one of them.

The wheel is the newest in target/wheels, built by scripts/wheel.sh (the
test command builds it from its debug build with `--dev`): without a wheel
the tests skip, saying so."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tritonclient.http as httpclient

from onnx_models import add_sub_model
from python_models import add_sub, write_repo
from remote_server import infer_add_sub
from servers import REPO_ROOT, TARGET, Server

pytestmark = pytest.mark.skipif(TARGET != "oxiserve", reason="oxiserve's own package")

# The suite's pins of the wheel's dependencies and theirs.
PINNED = ("numpy", "onnxruntime", "flatbuffers", "packaging", "protobuf")


def newest_wheel():
    wheels = sorted((REPO_ROOT / "target/wheels").glob("oxiserve-*.whl"),
                    key=lambda w: w.stat().st_mtime)
    if not wheels:
        pytest.skip("no wheel in target/wheels: scripts/wheel.sh builds it")
    return wheels[-1]


def pins():
    """`name==version` lines of tests/requirements.txt for the PINNED packages."""
    lines = (REPO_ROOT / "tests/requirements.txt").read_text().splitlines()
    return [line for line in lines if line.split("==")[0].lower() in PINNED]


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh virtual environment with the wheel installed by pip."""
    wheel = newest_wheel()
    root = tmp_path_factory.mktemp("wheel")
    constraints = root / "constraints.txt"
    constraints.write_text("\n".join(pins()) + "\n")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run(
        [str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check",
         "-c", str(constraints), str(wheel)],
        capture_output=True, text=True, timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return venv


def bare_env():
    """No variable that points oxiserve at a library or a Python, and a PATH
    whose python3 (if any) has no numpy."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ORT_", "PYTHON", "VIRTUAL_ENV", "LD_"))}
    env["PATH"] = "/usr/bin:/bin"
    return env


def test_the_wheel_is_tagged_for_manylinux():
    name = newest_wheel().name
    assert re.fullmatch(r"oxiserve-[\d.]+-py3-none-manylinux_\d+_\d+_\w+\.whl", name), name


def test_the_installed_server_serves_onnx_and_python_models(venv, tmp_path):
    repo = write_repo(tmp_path / "models", [add_sub()])
    onnx = add_sub_model("onnx_add_sub")
    onnx.write(repo, onnx.config(max_batch_size=8))
    with Server(repo, binary=venv / "bin/oxiserve", env=bare_env(), cwd=tmp_path) as server:
        client = httpclient.InferenceServerClient(server.url)
        infer_add_sub(client)
        a = np.arange(4, dtype=np.float32).reshape(1, 4)
        b = np.ones((1, 4), dtype=np.float32)
        inputs = [httpclient.InferInput(n, [1, 4], "FP32") for n in ("A", "B")]
        inputs[0].set_data_from_numpy(a)
        inputs[1].set_data_from_numpy(b)
        result = client.infer("onnx_add_sub", inputs)
        np.testing.assert_array_equal(result.as_numpy("SUM"), a + b)
        np.testing.assert_array_equal(result.as_numpy("DIFF"), a - b)
        client.close()
        output = server.output()
    assert f"python backend: {venv}/bin/python3 ready" in output, output
    capi = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert f"onnxruntime backend: loaded {capi}/site-packages/onnxruntime/capi/" in output, output


def test_the_installed_perf_tool_measures(venv, tmp_path):
    repo = write_repo(tmp_path / "models", [add_sub()])
    with Server(repo, binary=venv / "bin/oxiserve", env=bare_env(), cwd=tmp_path) as server:
        done = subprocess.run(
            [str(venv / "bin/oxiserve-perf"), "-m", "add_sub", "-u", server.url,
             "--measurement-mode", "count_windows", "--measurement-request-count", "20",
             "--max-trials", "3"],
            capture_output=True, text=True, timeout=120, env=bare_env(),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "infer/sec" in done.stdout, done.stdout
