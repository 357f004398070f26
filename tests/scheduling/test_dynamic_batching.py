"""The dynamic batcher seen from a client: concurrent requests share
executions, a full queue refuses with Triton's status and text, a request
that waited past its queue timeout is rejected, and the `priority` parameter
is accepted for any level (unknown levels fall back to the default one).

Each test starts its own server, so the counters move only by its requests.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import Http, expect_error, wait_for
from models import identity

CONCURRENT = 32


def _input(k, rows=1, module=httpclient):
    data = (np.arange(rows * 4, dtype=np.int32) + 100 * k).reshape(rows, 4)
    inp = module.InferInput("INPUT0", [rows, 4], "INT32")
    inp.set_data_from_numpy(data)
    return data, inp


def _stats(client, model):
    (entry,) = client.get_inference_statistics(model)["model_stats"]
    return entry


def _counted(client, model, successes, failures=0):
    def done():
        entry = _stats(client, model)
        stats = entry["inference_stats"]
        ok = stats["success"]["count"] >= successes and stats["fail"]["count"] >= failures
        return entry if ok else None

    return wait_for(done, what=f"{successes} successes and {failures} failures counted")


def test_concurrent_requests_share_executions(start_server):
    """32 requests at once on one slow instance: the batcher groups them, so
    there are fewer executions than inferences; every answer is its own."""
    spec = identity("dyn", "INT32", dims=[4], max_batch_size=8, execute_delay_ms=100,
                    extra_config="dynamic_batching { max_queue_delay_microseconds: 20000 }")
    server = start_server([spec])
    client = httpclient.InferenceServerClient(server.url, concurrency=CONCURRENT)
    try:
        pending = []
        for k in range(CONCURRENT):
            data, inp = _input(k)
            pending.append((k, data, client.async_infer("dyn", [inp], request_id=str(k))))
        for k, data, handle in pending:
            result = handle.get_result(timeout=120)
            assert result.get_response()["id"] == str(k)
            np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), data)
        entry = _counted(client, "dyn", CONCURRENT)
        assert entry["inference_stats"]["fail"]["count"] == 0
        assert entry["inference_count"] == CONCURRENT
        assert 1 <= entry["execution_count"] < entry["inference_count"]
        batched = [b for b in entry["batch_stats"] if b["batch_size"] > 1]
        assert batched, entry["batch_stats"]
        assert all(b["batch_size"] <= 8 for b in entry["batch_stats"])
    finally:
        client.close()


def test_requests_of_different_shapes_are_not_batched(start_server):
    """Variable-size inputs: requests whose shapes differ never share an
    execution. Six requests of width 2 then six of width 3: the batcher
    groups each run of one shape (a batch ends at the first other shape)."""
    spec = identity("ragged", "INT32", dims=[-1], max_batch_size=8, execute_delay_ms=200,
                    extra_config="dynamic_batching { max_queue_delay_microseconds: 50000 }")
    server = start_server([spec])
    client = httpclient.InferenceServerClient(server.url, concurrency=16)
    try:
        handles = []
        for k in range(12):
            width = 2 + k // 6
            data = np.full((1, width), k, dtype=np.int32)
            inp = httpclient.InferInput("INPUT0", [1, width], "INT32")
            inp.set_data_from_numpy(data)
            handles.append((data, client.async_infer("ragged", [inp])))
        for data, handle in handles:
            np.testing.assert_array_equal(handle.get_result(timeout=60).as_numpy("OUTPUT0"), data)
        entry = _counted(client, "ragged", 12)
        assert entry["inference_count"] == 12
        # Two shapes: at least two executions, and fewer than 12 overall.
        assert 2 <= entry["execution_count"] < 12
    finally:
        client.close()


def _start_slow(start_server, queue_policy):
    spec = identity("slow", "INT32", dims=[4], max_batch_size=8, execute_delay_ms=1500,
                    extra_config=f"dynamic_batching {{ default_queue_policy {{ {queue_policy} }} }}")
    return start_server([spec])


def _background(url, k, results):
    """One HTTP request on its own thread; its outcome lands in results[k]."""

    def run():
        client = httpclient.InferenceServerClient(url, network_timeout=60)
        try:
            _, inp = _input(k)
            results[k] = client.infer("slow", [inp]).as_numpy("OUTPUT0")
        except InferenceServerException as e:
            results[k] = e
        finally:
            client.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_full_queue_rejects_with_unavailable(start_server):
    """max_queue_size 1: one request executes, one waits, the next is
    refused at once: HTTP 503 / gRPC UNAVAILABLE, "Exceeds maximum queue size"."""
    server = _start_slow(start_server, "max_queue_size: 1")
    results = {}
    first = _background(server.url, 0, results)
    time.sleep(0.5)  # the first request is executing
    second = _background(server.url, 1, results)
    time.sleep(0.3)  # the second one waits in the queue
    with Http(server.url) as http:
        body = {"id": "r3", "inputs": [
            {"name": "INPUT0", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]}]}
        resp = http.infer("slow", body)
        text = expect_error(resp, 503, "Exceeds maximum queue size")
        assert text == "[request id: r3] Exceeds maximum queue size", text
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        _, inp = _input(4, module=grpcclient)
        with pytest.raises(InferenceServerException) as refused:
            grpc.infer("slow", [inp])
        assert refused.value.status() == "StatusCode.UNAVAILABLE"
        assert "Exceeds maximum queue size" in refused.value.message()
    finally:
        grpc.close()
    first.join(60)
    second.join(60)
    assert not isinstance(results[0], Exception), results[0]
    assert not isinstance(results[1], Exception), results[1]
    client = httpclient.InferenceServerClient(server.url)
    try:
        entry = _counted(client, "slow", 2)
        # Refused before it was queued: not counted, as in Triton.
        assert entry["inference_stats"]["success"]["count"] == 2
        assert entry["inference_stats"]["fail"]["count"] == 0
    finally:
        client.close()


def test_queue_timeout_rejects_waiting_request(start_server):
    """default_timeout_microseconds with REJECT: a request still queued past
    its timeout gets "Request timeout expired" (503) and counts as a failure."""
    server = _start_slow(
        start_server, "timeout_action: REJECT, default_timeout_microseconds: 100000")
    results = {}
    first = _background(server.url, 0, results)
    time.sleep(0.5)  # the first request is executing
    with Http(server.url) as http:
        resp = http.infer("slow", {"inputs": [
            {"name": "INPUT0", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]}]})
        expect_error(resp, 503, "Request timeout expired")
    first.join(60)
    assert not isinstance(results[0], Exception), results[0]
    client = httpclient.InferenceServerClient(server.url)
    try:
        entry = _counted(client, "slow", 1, failures=1)
        assert entry["inference_stats"]["fail"]["count"] == 1
    finally:
        client.close()


def test_request_timeout_overrides_a_longer_default(start_server):
    """allow_timeout_override: the request's `timeout` parameter (in
    microseconds) shortens the default, so the waiting request is rejected."""
    server = _start_slow(start_server, (
        "timeout_action: REJECT, default_timeout_microseconds: 60000000, "
        "allow_timeout_override: true"))
    results = {}
    first = _background(server.url, 0, results)
    time.sleep(0.5)  # the first request is executing
    with Http(server.url) as http:
        resp = http.infer("slow", {"parameters": {"timeout": 100000}, "inputs": [
            {"name": "INPUT0", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]}]})
        expect_error(resp, 503, "Request timeout expired")
    first.join(60)
    assert not isinstance(results[0], Exception), results[0]


def test_priority_parameter_accepts_any_level(start_server):
    """priority_levels 2: levels 1 and 2 are served, 0 and unknown levels use
    the default level (Triton does not refuse them); negative is refused."""
    spec = identity("prio", "INT32", dims=[4], max_batch_size=8, extra_config=(
        "dynamic_batching { priority_levels: 2, default_priority_level: 2 }"))
    server = start_server([spec])
    with Http(server.url) as http:
        for priority in (0, 1, 2, 7):
            body = {"parameters": {"priority": priority}, "inputs": [
                {"name": "INPUT0", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]}]}
            resp = http.infer("prio", body)
            assert resp.status_code == 200, (priority, resp.text)
            assert resp.json()["outputs"][0]["data"] == [1, 2, 3, 4]
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        _, inp = _input(1, module=grpcclient)
        result = grpc.infer("prio", [inp], priority=1, timeout=1000000)
        assert result.as_numpy("OUTPUT0").shape == (1, 4)
    finally:
        grpc.close()


def test_higher_priority_executes_first(start_server):
    """Batches of one on one slow instance: while the first request executes,
    a level-2 request and then a level-1 request queue; level 1 goes first."""
    spec = identity("ranked", "INT32", dims=[4], max_batch_size=1, execute_delay_ms=1000,
                    extra_config=("dynamic_batching { priority_levels: 2, "
                                  "default_priority_level: 2 }"))
    server = start_server([spec])
    done = {}

    def send(name, priority):
        client = httpclient.InferenceServerClient(server.url, network_timeout=60)
        try:
            _, inp = _input(1)
            client.infer("ranked", [inp], priority=priority)
            done[name] = time.monotonic()
        finally:
            client.close()

    threads = []
    for name, priority in (("first", 0), ("low", 2), ("high", 1)):
        threads.append(threading.Thread(target=send, args=(name, priority)))
        threads[-1].start()
        time.sleep(0.3)
    for thread in threads:
        thread.join(60)
    assert set(done) == {"first", "low", "high"}, done
    assert done["first"] < done["high"] < done["low"], done


def test_many_threads_with_priorities(start_server):
    """Mixed priorities under load: every request answered with its own data."""
    spec = identity("prio_load", "INT32", dims=[4], max_batch_size=8, execute_delay_ms=20,
                    extra_config=("dynamic_batching { priority_levels: 3, "
                                  "default_priority_level: 2, "
                                  "max_queue_delay_microseconds: 5000 }"))
    server = start_server([spec])

    def worker(t):
        client = httpclient.InferenceServerClient(server.url)
        try:
            for i in range(5):
                data, inp = _input(t * 10 + i)
                result = client.infer("prio_load", [inp], priority=1 + (t + i) % 3)
                np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), data)
        finally:
            client.close()
        return t

    with ThreadPoolExecutor(12) as pool:
        assert sorted(pool.map(worker, range(12))) == list(range(12))
