"""Many requests in flight at once: every answer is correct and is the answer
to its own request (model `concurrent`: dynamic batching, 2 ms per execution)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tritonclient.http as httpclient

from helpers import Http, wait_for

REQUESTS = 200


def _request(k, binary):
    rows = 1 + k % 3
    data = (np.arange(rows * 4, dtype=np.int32) + 1000 * k).reshape(rows, 4)
    inp = httpclient.InferInput("INPUT0", list(data.shape), "INT32")
    inp.set_data_from_numpy(data, binary_data=binary)
    out = httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)
    return data, inp, out


def _counts(client):
    (entry,) = client.get_inference_statistics("concurrent")["model_stats"]
    stats = entry["inference_stats"]
    return (stats["success"]["count"], stats["fail"]["count"],
            entry["inference_count"], entry["execution_count"])


def test_async_infer_200_in_flight(main_server):
    client = httpclient.InferenceServerClient(main_server.url, concurrency=16)
    try:
        before = _counts(client)
        pending = []
        for k in range(REQUESTS):
            data, inp, out = _request(k, binary=k % 2 == 0)
            handle = client.async_infer("concurrent", [inp], outputs=[out], request_id=f"r{k}")
            pending.append((k, data, handle))
        for k, data, handle in pending:
            result = handle.get_result(timeout=120)
            assert result.get_response()["id"] == f"r{k}"
            np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), data)
        # Each request counted once, however the dynamic batcher grouped them.
        # A server may count a request just after sending its response.
        def counted():
            now = _counts(client)
            return now if now[0] - before[0] >= REQUESTS else None

        after = wait_for(counted, what="all requests in the statistics")
        success, fail, inferences, executions = (a - b for a, b in zip(after, before))
        assert (success, fail) == (REQUESTS, 0)
        assert inferences == sum(1 + k % 3 for k in range(REQUESTS))
        assert 1 <= executions <= REQUESTS
    finally:
        client.close()


def test_threads_with_raw_http(main_server):
    """16 threads, each with its own connection, 10 requests each."""

    def worker(t):
        with Http(main_server.url) as http:
            for i in range(10):
                k = t * 100 + i
                body = {"id": str(k), "inputs": [
                    {"name": "INPUT0", "shape": [1, 2], "datatype": "INT32", "data": [k, -k]}]}
                resp = http.infer("concurrent", body)
                assert resp.status_code == 200, resp.text
                assert resp.json()["id"] == str(k)
                assert resp.json()["outputs"][0]["data"] == [k, -k]
        return t

    with ThreadPoolExecutor(16) as pool:
        assert sorted(pool.map(worker, range(16))) == list(range(16))
