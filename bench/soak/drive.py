"""Soak driver: mixed HTTP and gRPC traffic against a running oxiserve for
DURATION seconds while a model is reloaded every RELOAD_EVERY seconds and
shared memory regions come and go; samples the server's RSS, descriptors and
/dev/shm entries every SAMPLE_EVERY seconds. Prints a JSON summary.

  drive.py HTTP_PORT GRPC_PORT SERVER_PID
"""

import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import requests
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))
from procfs import rss_kb  # the tests' /proc reader

DURATION = float(os.environ.get("DURATION", 1800))
RELOAD_EVERY = float(os.environ.get("RELOAD_EVERY", 10))
SAMPLE_EVERY = float(os.environ.get("SAMPLE_EVERY", 30))
HTTP_CLIENTS = int(os.environ.get("HTTP_CLIENTS", 4))
GRPC_CLIENTS = int(os.environ.get("GRPC_CLIENTS", 4))

http_port, grpc_port, pid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + DURATION
counts = Counter()
errors = Counter()
lock = threading.Lock()


def record(kind, error=None):
    with lock:
        counts[kind] += 1
        if error is not None:
            errors[f"{kind}: {str(error)[:160]}"] += 1


def add_sub_inputs(module):
    a = np.arange(4, dtype=np.float32).reshape(1, 4)
    inputs = [module.InferInput("INPUT0", [1, 4], "FP32"), module.InferInput("INPUT1", [1, 4], "FP32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(a)
    return inputs, a + a


def http_client():
    session = requests.Session()
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "INT32",
                        "data": list(range(16))}]}
    base = f"http://127.0.0.1:{http_port}/v2/models"
    while time.monotonic() < deadline:
        for model, payload in (("identity", body), ("add_sub", None)):
            try:
                if payload is None:
                    payload = {"inputs": [
                        {"name": "INPUT0", "shape": [1, 4], "datatype": "FP32", "data": [0, 1, 2, 3]},
                        {"name": "INPUT1", "shape": [1, 4], "datatype": "FP32", "data": [0, 1, 2, 3]},
                    ]}
                    want = [0, 2, 4, 6]
                else:
                    want = list(range(16))
                resp = session.post(f"{base}/{model}/infer", json=payload, timeout=30)
                ok = resp.status_code == 200 and resp.json()["outputs"][0]["data"] == want
                record("http", None if ok else f"{resp.status_code} {resp.text}")
            except Exception as e:  # noqa: BLE001 - counted, the soak goes on
                record("http", type(e).__name__ + ": " + str(e))


def grpc_client():
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{grpc_port}")
    inputs, want = add_sub_inputs(grpcclient)
    while time.monotonic() < deadline:
        try:
            result = client.infer("add_sub", inputs, client_timeout=30)
            ok = np.array_equal(result.as_numpy("OUTPUT0"), want)
            record("grpc", None if ok else "wrong answer")
        except Exception as e:  # noqa: BLE001
            record("grpc", str(e))
    client.close()


def reloader():
    client = httpclient.InferenceServerClient(f"127.0.0.1:{http_port}")
    while time.monotonic() < deadline:
        time.sleep(RELOAD_EVERY)
        try:
            client.load_model("add_sub")  # a reload: the old version serves meanwhile
            record("reload")
        except Exception as e:  # noqa: BLE001
            record("reload", str(e))


def shared_memory():
    client = httpclient.InferenceServerClient(f"127.0.0.1:{http_port}")
    n = 0
    while time.monotonic() < deadline:
        n += 1
        name, key = f"soak{n}", f"/oxiserve_soak_{os.getpid()}_{n}"
        handle = shm.create_shared_memory_region(name, key, 64)
        try:
            data = np.arange(16, dtype=np.int32).reshape(1, 16)
            shm.set_shared_memory_region(handle, [data])
            client.register_system_shared_memory(name, key, 64)
            tensor = httpclient.InferInput("INPUT0", [1, 16], "INT32")
            tensor.set_shared_memory(name, 64)
            result = client.infer("identity", [tensor])
            ok = np.array_equal(result.as_numpy("OUTPUT0"), data)
            client.unregister_system_shared_memory(name)
            record("shm", None if ok else "wrong answer")
        except Exception as e:  # noqa: BLE001
            record("shm", str(e))
        finally:
            shm.destroy_shared_memory_region(handle)
        time.sleep(0.2)


def sample():
    return {"t": round(DURATION - (deadline - time.monotonic())), "rss_kb": rss_kb(pid),
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "dev_shm": len(os.listdir("/dev/shm")),
            "requests": sum(counts.values())}


threads = [threading.Thread(target=http_client) for _ in range(HTTP_CLIENTS)]
threads += [threading.Thread(target=grpc_client) for _ in range(GRPC_CLIENTS)]
threads += [threading.Thread(target=reloader), threading.Thread(target=shared_memory)]
for t in threads:
    t.start()
samples = [sample()]
while time.monotonic() < deadline:
    time.sleep(min(SAMPLE_EVERY, max(0.0, deadline - time.monotonic())))
    samples.append(sample())
for t in threads:
    t.join()
print(json.dumps({"counts": counts, "errors": errors, "samples": samples}))
