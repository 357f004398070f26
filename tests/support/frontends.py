"""Helpers of the frontends tests (tests/frontends/): the generate
extension, the SageMaker endpoint and the Vertex AI endpoint.

A text-generation stand-in model (python_backend/models/generator), a
server with one more endpoint (SageMaker or Vertex AI) on a port of its own,
started with extra environment variables, and Server-Sent Events read off a
`requests` response.
"""

import json
import os
import re
import socket
import subprocess
import time

import numpy as np
import pytest
import tritonclient.http as httpclient

from models import ModelSpec, Tensor, model_source
from python_models import PyModel, config
from servers import START_TIMEOUT_S, TARGET, TRITON_PORTS, Server, accepts, command

GENERATOR_PY = model_source("generator")

SAGEMAKER_STARTED = re.compile(r"Started Sagemaker HTTPService at [^\s:]+:(\d+)")
VERTEX_STARTED = re.compile(r"Started Vertex AI HTTPService at [^\s:]+:(\d+)")

_handed_out = set()


def generator_model(name="generator", decoupled=True):
    """The generator: PROMPT (BYTES [1,1]) and STREAM (BOOL [1,1]) in,
    optional input_ids (INT32 [1,-1]), TEXT (BYTES [1,-1]) out."""
    extra = "model_transaction_policy { decoupled: true }\n" if decoupled else ""
    return PyModel(
        name,
        GENERATOR_PY,
        config(
            [("PROMPT", "BYTES", [1, 1]), ("STREAM", "BOOL", [1, 1]),
             ("input_ids", "INT32", [1, -1], "optional: true")],
            [("TEXT", "BYTES", [1, -1])],
            extra=extra,
        ),
    )


def echo_model(name="echo"):
    """A Python identity model with one input of each shape the generate
    extension maps (OUT_<name> echoes <name>); only TEXT is required."""
    inputs = [
        Tensor("TEXT", "BYTES", [1]),
        Tensor("INTS", "INT32", [-1], "optional: true"),
        Tensor("FLOATS", "FP32", [2], "optional: true"),
        Tensor("FLAG", "BOOL", [1], "optional: true"),
        Tensor("MATRIX", "INT64", [2, -1], "optional: true"),
        Tensor("U8", "UINT8", [-1, 3], "optional: true"),
    ]
    outputs = [Tensor(f"OUT_{t.name}", t.datatype, t.dims) for t in inputs]
    return ModelSpec(name, inputs, outputs, python_only=True)


def binary_request():
    """A request of the echo model with binary data (INTS [0, 1, 2]) and a
    binary output (OUT_INTS): (body, length of its JSON part)."""
    ints = httpclient.InferInput("INTS", [3], "INT32")
    ints.set_data_from_numpy(np.arange(3, dtype=np.int32), binary_data=True)
    text = httpclient.InferInput("TEXT", [1], "BYTES")
    text.set_data_from_numpy(np.array([b"hi"], dtype=np.object_), binary_data=False)
    outputs = [httpclient.InferRequestedOutput("OUT_INTS", binary_data=True)]
    return httpclient.InferenceServerClient.generate_request_body([text, ints], outputs=outputs)


def endpoint_port():
    """A port for the SageMaker or Vertex AI endpoint: 0 (any) for oxiserve,
    a free one of OXI_TRITON_PORTS (from the top) for real Triton."""
    if TARGET != "triton":
        return 0
    for port in reversed(TRITON_PORTS):
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port left in {TRITON_PORTS}")


def environment(**variables):
    """This process's environment with `variables` set (None removes one)."""
    env = dict(os.environ)
    for name, value in variables.items():
        env.pop(name, None)
        if value is not None:
            env[name] = str(value)
    return env


def wait_for_line(server, pattern):
    """The first match of `pattern` in the server's output, waiting for it."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        match = pattern.search(server.output())
        if match:
            return match
        if server.proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"no line matching {pattern.pattern!r}:\n{server.output()[-3000:]}")


class Endpoint:
    """A started server and the URL of its SageMaker or Vertex AI endpoint."""

    def __init__(self, server, started):
        self.server = server
        port = int(wait_for_line(server, started).group(1))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not accepts(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port}"

    def stop(self):
        self.server.stop()


def sagemaker(repo, flags=(), **variables):
    """A server on `repo` with the SageMaker endpoint and `variables` set."""
    flags = ["--allow-sagemaker=true", f"--sagemaker-port={endpoint_port()}", *flags]
    return Endpoint(Server(repo, flags, env=environment(**variables)), SAGEMAKER_STARTED)


def vertex_ai(repo, flags=(), **variables):
    """A server on `repo` with the Vertex AI endpoint (its routes /health and
    /predict unless `variables` say otherwise) and the HTTP endpoint."""
    variables = {"AIP_HEALTH_ROUTE": "/health", "AIP_PREDICT_ROUTE": "/predict", **variables}
    flags = ["--allow-vertex-ai=true", f"--vertex-ai-port={endpoint_port()}",
             "--allow-http=true", *flags]
    return Endpoint(Server(repo, flags, env=environment(**variables)), VERTEX_STARTED)


def run_until(pattern, repo, flags=(), timeout=60, **variables):
    """Runs a server until it prints `pattern` or exits, whether or not it
    has an HTTP endpoint: (exit status, or None if it was still running;
    output). A server whose `repo` is None is given none on the command
    line."""
    args = [a for a in command(repo or "unused", flags) if repo or "--model-repository" not in a]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env=environment(**variables))
    out = b""
    os.set_blocking(proc.stdout.fileno(), False)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        out += proc.stdout.read() or b""
        if pattern.search(out.decode("utf-8", "replace")):
            break
        time.sleep(0.1)
    status = proc.poll()
    if status is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    try:  # what the server left behind (Python backend stubs)
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass
    os.set_blocking(proc.stdout.fileno(), True)
    out += proc.stdout.read() or b""
    return status, out.decode("utf-8", "replace")


def sse_events(response):
    """The `data:` payloads of a Server-Sent Events response, parsed as
    JSON; every event must be `data: ...` followed by a blank line."""
    body = response.content.decode()
    assert body == "" or body.endswith("\n\n"), repr(body)
    events = [chunk for chunk in body.split("\n\n") if chunk]
    for event in events:
        assert event.startswith("data: "), repr(event)
    return [json.loads(event[len("data: "):]) for event in events]
