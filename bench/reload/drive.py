"""Reloads a Python model RELOADS times under steady traffic and reports what
the clients saw and what the server's memory did. Used by bench/model_reload.sh.

    drive.py TARGET MODE REPO PORT -- SERVER COMMAND...

TARGET is a label; MODE is `explicit` (reload by POST .../load with a
`config` override whose `tag` parameter changes) or `poll` (rewrite
config.pbtxt with a new tag; the server polls every second). Prints one JSON
object: requests answered, failures (by error text), reload times (explicit:
the load call; poll: from the write until the model answers with the new
tag), the server's RSS and the PSS of the server and its descendants before
the reloads (after two warm-up reloads) and after them.
"""

import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))
from procfs import descendants, rss_kb  # the tests' /proc readers

RELOADS = int(os.environ.get("RELOADS", "20"))
CLIENTS = int(os.environ.get("CLIENTS", "4"))
BODY = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, 4], "datatype": "FP32",
                               "data": [1.0, 2.0, 3.0, 4.0]}]})


def post(port, path, body, timeout=120):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", path, body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


class Traffic:
    """Clients posting the same request in a loop (keep-alive) until stopped."""

    def __init__(self, port):
        self.port = port
        self.stop = threading.Event()
        self.ok = 0
        self.tags = {}
        self.failures = {}
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run) for _ in range(CLIENTS)]
        for thread in self.threads:
            thread.start()

    def run(self):
        conn = None
        while not self.stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                conn.request("POST", "/v2/models/m/infer", BODY,
                             {"Content-Type": "application/json"})
                response = conn.getresponse()
                data = response.read()
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}: {data[:120]!r}")
                tag = json.loads(data)["outputs"][0]["data"][0]
                with self.lock:
                    self.ok += 1
                    self.tags[tag] = time.monotonic()
            except Exception as e:  # noqa: BLE001 - counted and reported
                conn = None
                with self.lock:
                    key = str(e)[:160]
                    self.failures[key] = self.failures.get(key, 0) + 1

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join()


def memory(pid):
    """(server RSS kB, PSS kB of the server and its descendants)."""
    rss = rss_kb(pid)
    pss = 0
    for p in [pid, *descendants(pid)]:
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            pass
    return rss, pss


def config_text(tag):
    return f'''name: "m"
backend: "python"
max_batch_size: 8
input [ {{ name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] }} ]
output [ {{ name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 1 ] }} ]
instance_group [ {{ count: 1, kind: KIND_CPU }} ]
parameters [ {{ key: "tag", value: {{ string_value: "{tag}" }} }} ]
'''


MODEL_PY = '''\
import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.tag = float(config["parameters"]["tag"]["string_value"])

    def execute(self, requests):
        out = np.array([[self.tag]], dtype=np.float32)
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", out)]) for _ in requests]
'''


def write_model(repo, tag):
    (repo / "m" / "1").mkdir(parents=True, exist_ok=True)
    (repo / "m" / "1" / "model.py").write_text(MODEL_PY)
    (repo / "m" / "config.pbtxt").write_text(config_text(tag))


def reload_explicit(port, tag):
    """POSTs a load with the config override: the same model, the new tag."""
    override = json.dumps({
        "name": "m", "backend": "python", "max_batch_size": 8,
        "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [4]}],
        "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [1]}],
        "instance_group": [{"count": 1, "kind": "KIND_CPU"}],
        "parameters": {"tag": {"string_value": str(tag)}},
    })
    status, data = post(port, "/v2/repository/models/m/load",
                        json.dumps({"parameters": {"config": override}}))
    if status != 200:
        raise RuntimeError(f"load: HTTP {status}: {data[:200]!r}")


def reload(mode, port, repo, traffic, tag):
    """Reloads to `tag`; returns seconds until the model answered with it."""
    start = time.monotonic()
    if mode == "explicit":
        reload_explicit(port, tag)
    else:
        (repo / "m" / "config.pbtxt").write_text(config_text(tag))
    deadline = start + 60
    while float(tag) not in traffic.tags:
        if time.monotonic() > deadline:
            raise RuntimeError(f"reload to tag {tag} not seen in 60 s")
        time.sleep(0.01)
    return traffic.tags[float(tag)] - start


def main():
    target, mode, repo, port = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    command = sys.argv[sys.argv.index("--") + 1:]
    write_model(repo, 1)
    log = open(repo.parent / f"{target}-{mode}.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    result = {"target": target, "mode": mode}
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/v2/models/m/ready")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the server did not become ready")
            time.sleep(0.1)
        traffic = Traffic(port)
        times = [reload(mode, port, repo, traffic, tag) for tag in (2, 3)]  # warm-up
        time.sleep(1)
        result["before"] = memory(server.pid)
        times = [reload(mode, port, repo, traffic, tag) for tag in range(4, 4 + RELOADS)]
        time.sleep(2)  # replaced versions finish and go away
        traffic.finish()
        result["after"] = memory(server.pid)
        result.update(requests=traffic.ok, failures=traffic.failures,
                      reload_s_median=statistics.median(times), reload_s_max=max(times))
    except Exception as e:  # noqa: BLE001 - reported in the results
        result["error"] = str(e)
    finally:
        os.killpg(server.pid, 15)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
