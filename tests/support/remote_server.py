"""oxiserve on remote model repositories (`s3://`, `gs://`, `as://` URLs),
as the tests of each cloud's repositories start it, and the inferences they
check it with."""

import subprocess
from pathlib import Path

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from models import identity
from python_models import add_sub, write_repo
from servers import Server, oxiserve_bin


class _RemoteRepo(str):
    """A repository URL where `servers.Server` expects a folder (a Path would
    fold its `//`); `parent` and `name` place the server's log on failure."""

    def __new__(cls, url, log_dir):
        repo = super().__new__(cls, url)
        repo.parent, repo.name = Path(log_dir), "remote-repository"
        return repo


class RemoteServer(Server):
    """`servers.Server` on a remote repository, in environment `env`."""

    def __init__(self, url, log_dir, flags=(), env=None):
        self._url = _RemoteRepo(url, log_dir)
        super().__init__(log_dir, flags, env=env)

    def _start(self, flags):
        self.repo = self._url
        super()._start(flags)


def run_oxiserve(args, env, timeout=60):
    """Runs oxiserve with `args` to its exit: (exit status, output)."""
    proc = subprocess.run(
        [str(oxiserve_bin()), *args], env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=timeout,
    )
    return proc.returncode, proc.stdout + proc.stderr


def start_fails(url, env, flags=()):
    """Starts oxiserve on `url`: its output, after checking it exited with 1."""
    status, output = run_oxiserve(
        [f"--model-repository={url}", "--http-port=0", "--grpc-port=0", "--metrics-port=0",
         *flags],
        env,
    )
    assert status == 1, output
    return output


def infer_identity(client, name="ident"):
    """Infers on the identity model `models.identity(name, "FP32", dims=[4])`."""
    data = np.arange(4, dtype=np.float32).reshape(1, 4)
    inp = httpclient.InferInput("INPUT0", [1, 4], "FP32")
    inp.set_data_from_numpy(data)
    np.testing.assert_array_equal(client.infer(name, [inp]).as_numpy("OUTPUT0"), data)


def infer_add_sub(client):
    """Infers on the Python model `python_models.add_sub()`."""
    a = np.array([[1, 2, 3, 4]], dtype=np.float32)
    b = np.array([[4, 3, 2, 1]], dtype=np.float32)
    inputs = [httpclient.InferInput(f"INPUT{i}", [1, 4], "FP32") for i in range(2)]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    result = client.infer("add_sub", inputs)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def model_config(client, name):
    """The model's configuration, `{}` while it is not loaded."""
    try:
        return client.get_model_config(name)
    except InferenceServerException:
        return {}


def write_two_models(folder):
    """`folder` as the repository the tests upload: an identity model
    (`ident`) and a Python model (`add_sub`)."""
    return write_repo(folder, [identity("ident", "FP32", dims=[4]), add_sub()])


def check_serves_both(server):
    """Both models of `write_two_models` answer, and the index lists them ready."""
    client = httpclient.InferenceServerClient(server.url)
    infer_identity(client)
    infer_add_sub(client)
    index = {m["name"]: m["state"] for m in client.get_model_repository_index()}
    assert index == {"ident": "READY", "add_sub": "READY"}
    client.close()
