"""A reload drops no request: steady traffic on a Python model while it is
reloaded 20 times by explicit load and 20 times by poll. No request fails,
and afterwards the server's memory is back near its level and no Python
process is left over (Triton's poll mode had downtime: its issue #2076; it
leaked on reload: #4966)."""

import threading

import pytest
import tritonclient.http as httpclient

from helpers import wait_for
from management_models import config_json, infer, logging_model
from procfs import descendants as _descendants
from procfs import rss_kb as _rss_kb
from python_models import write_repo
from servers import Server

RELOADS = 20


class Traffic:
    """Clients sending requests in a loop until stopped; counts outcomes."""

    def __init__(self, url, clients=4):
        self.stop = threading.Event()
        self.ok = 0
        self.failures = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(url,)) for _ in range(clients)]
        for thread in self._threads:
            thread.start()

    def _run(self, url):
        client = httpclient.InferenceServerClient(url)
        while not self.stop.is_set():
            try:
                assert infer(client, "m") == [1, 2, 3, 4]
                with self._lock:
                    self.ok += 1
            except Exception as e:  # noqa: BLE001 - every failure is reported
                with self._lock:
                    self.failures.append(repr(e))
        client.close()

    def finish(self):
        self.stop.set()
        for thread in self._threads:
            thread.join(60)


def _loads(server):
    return server.output().count("successfully loaded 'm'")


def _check(server, traffic, reload):
    """Reloads twice (the allocator's pools settle), takes the baseline,
    reloads RELOADS times under traffic, and compares."""
    for i in range(2):
        reload(i)
    baseline = _rss_kb(server.proc.pid)
    processes = len(_descendants(server.proc.pid))
    for i in range(RELOADS):
        reload(i + 2)
    traffic.finish()
    assert traffic.failures == [], traffic.failures[:5]
    assert traffic.ok > RELOADS, "traffic ran during the reloads"
    wait_for(lambda: len(_descendants(server.proc.pid)) == processes,
             what="old Python processes to exit")
    after = _rss_kb(server.proc.pid)
    assert after <= baseline * 1.25 + 8 * 1024, (baseline, after)


@pytest.mark.oxiserve_only
def test_explicit_reloads(tmp_path):
    repo = write_repo(tmp_path / "repo", [logging_model("m", tmp_path / "log")])
    flags = ["--model-control-mode=explicit", "--load-model=m"]
    with Server(repo, flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        traffic = Traffic(server.url)

        def reload(i):
            client.load_model("m", config=config_json("m", tmp_path / "log", tag=str(i)))

        _check(server, traffic, reload)


@pytest.mark.oxiserve_only
def test_poll_reloads(tmp_path):
    repo = write_repo(tmp_path / "repo", [logging_model("m", tmp_path / "log")])
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1"]
    with Server(repo, flags) as server:
        traffic = Traffic(server.url)
        config = repo / "m" / "config.pbtxt"
        original = config.read_text()

        def reload(i):
            loads = _loads(server)
            config.write_text(original.replace('string_value: ""', f'string_value: "{i}"'))
            wait_for(lambda: _loads(server) > loads, what=f"poll reload {i}")

        _check(server, traffic, reload)


def _deep_onnx_model(name, layers=64, width=512):
    """Y = X @ W1 @ W2 ... @ Wn: `layers` 1 MB weights, the sizes glibc keeps
    in its heap once freed (like a transformer's layers)."""
    import numpy as np
    from onnx import helper, numpy_helper

    from onnx_models import OnnxModel, make_proto

    rng = np.random.default_rng(0)
    nodes, inits, last = [], [], "X"
    for i in range(layers):
        weight = (rng.standard_normal((width, width)) / width).astype(np.float32)
        inits.append(numpy_helper.from_array(weight, f"W{i}"))
        nodes.append(helper.make_node("MatMul", [last, f"W{i}"], [f"h{i}"]))
        last = f"h{i}"
    nodes.append(helper.make_node("Identity", [last], ["Y"]))
    io, out = [("X", "FP32", ["N", width])], [("Y", "FP32", ["N", width])]
    return OnnxModel(name, make_proto(nodes, io, out, inits), io, out)


@pytest.mark.oxiserve_only  # the reference Triton here has no ONNX Runtime backend
def test_onnx_reloads_give_memory_back(tmp_path):
    """An in-process backend: 20 reloads of a 64 MB ONNX model leave the
    server no bigger than after its first load, and an unload frees the model."""
    model = _deep_onnx_model("deep")
    model.write(tmp_path / "repo", model.config(8))
    flags = ["--model-control-mode=explicit", "--load-model=deep"]
    with Server(tmp_path / "repo", flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        loaded = _rss_kb(server.proc.pid)
        for _ in range(RELOADS):
            client.load_model("deep")
        reloaded = _rss_kb(server.proc.pid)
        client.unload_model("deep")
        unloaded = _rss_kb(server.proc.pid)
        client.close()
    assert reloaded <= loaded * 1.25, (loaded, reloaded)
    assert unloaded < loaded - 48 * 1024, (loaded, unloaded)
