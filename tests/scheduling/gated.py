"""Gated Python models: each execution waits until the test releases it, so
that a test holds requests executing or queued in a known state and counts
executions, not milliseconds. They run on oxiserve and on real Triton.

`Gate` is the test's side of one model's gate folder; `gated_model` makes the
model; `metric` reads one sample of the server's /metrics."""

import json
import re
from pathlib import Path

import numpy as np
import requests
import tritonclient.http as httpclient

from helpers import wait_for
from python_models import PyModel, config

GATED_PY = (Path(__file__).parent / "models" / "gated" / "model.py").read_text()


class Gate:
    """The folder one gated model announces its executions in and waits on."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def started(self):
        """How many executions started so far."""
        return sum(1 for p in self.folder.glob("started-*") if not p.name.endswith(".tmp"))

    def batch(self, number, timeout=60):
        """Waits for execution `number` to start; its batch: {"requests", "ids"}."""
        path = self.folder / f"started-{number}"
        wait_for(path.exists, timeout=timeout, what=f"execution {number} to start")
        return json.loads(path.read_text())

    def release(self, number):
        """Lets execution `number` finish."""
        (self.folder / f"release-{number}").touch()

    def release_all(self):
        """Lets every execution, past and future, finish."""
        (self.folder / "release-all").touch()


def gated_model(name, gate, max_batch_size=4, extra="", inputs=None, outputs=None):
    """A gated model copying INPUT0 (FP32 [1]) to OUTPUT0, or `inputs` to `outputs`."""
    inputs = inputs or [("INPUT0", "FP32", [1])]
    outputs = outputs or [("OUTPUT0", "FP32", [1])]
    parameters = f'parameters {{ key: "gate_dir" value {{ string_value: "{gate.folder}" }} }}\n'
    return PyModel(name, GATED_PY, config(inputs, outputs, max_batch_size, parameters + extra))


def metric(server, name, **labels):
    """The value of one sample of /metrics; None when it is not there."""
    port = wait_for(lambda: server.metrics_port, timeout=30, what="the metrics port")
    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    wanted = {k: str(v) for k, v in labels.items()}
    for line in text.splitlines():
        match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if found == wanted:
            return float(match.group(3))
    return None


def pending(server, model, version=1):
    """nv_inference_pending_request_count of `model`."""
    return metric(server, "nv_inference_pending_request_count", model=model, version=version)


def wait_pending(server, model, count):
    """Waits until `model`'s pending gauge reads `count` (requests reach the
    server in their own time); the gauge only moves when requests arrive or
    executions start, which the tests drive."""
    wait_for(lambda: pending(server, model) == count, timeout=60,
             what=f"{model}'s pending request count to read {count} "
                  f"(it reads {pending(server, model)})")


class Sender:
    """Sends FP32 [1, 1] requests (INPUT0 = the request's number, its id
    the number as text) to one model with tritonclient.http, without
    waiting for their responses."""

    def __init__(self, server, model):
        self.server, self.model = server, model
        self.client = httpclient.InferenceServerClient(
            server.url, concurrency=32, network_timeout=600)

    def send(self, number, pending_after=None, **kwargs):
        """Sends request `number`; with `pending_after`, waits until the
        model's pending gauge reads that (the request arrived)."""
        tensor = httpclient.InferInput("INPUT0", [1, 1], "FP32")
        tensor.set_data_from_numpy(np.array([[number]], dtype=np.float32))
        future = self.client.async_infer(
            self.model, [tensor], request_id=str(number), **kwargs)
        if pending_after is not None:
            wait_pending(self.server, self.model, pending_after)
        return future

    def close(self):
        self.client.close()


def answer(future):
    """The OUTPUT0 value of a request that succeeded."""
    return future.get_result().as_numpy("OUTPUT0").item()


def ids(batch):
    """The numbers of a batch's requests, sorted."""
    return sorted(int(i) for i in batch["ids"])


class Ensemble:
    """An ensemble model folder; `steps` are (model, {model input: tensor},
    {model output: tensor})."""

    def __init__(self, name, inputs, outputs, steps, max_batch_size=0):
        def step(model, inputs, outputs):
            maps = [f'input_map {{ key: "{k}" value: "{v}" }}' for k, v in inputs.items()]
            maps += [f'output_map {{ key: "{k}" value: "{v}" }}' for k, v in outputs.items()]
            return f'    {{ model_name: "{model}" model_version: -1 ' + " ".join(maps) + " }"

        self.name = name
        self.text = (
            f'name: "{name}"\nplatform: "ensemble"\n'
            + config(inputs, outputs, max_batch_size).split("instance_group")[0]
            + "ensemble_scheduling {\n  step [\n"
            + ",\n".join(step(*s) for s in steps)
            + "\n  ]\n}\n"
        )

    def write(self, repo):
        folder = Path(repo) / self.name
        (folder / "1").mkdir(parents=True, exist_ok=True)
        (folder / "config.pbtxt").write_text(self.text)
